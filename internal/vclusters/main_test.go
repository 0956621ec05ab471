package vclusters

import (
	"os"
	"testing"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

func TestMain(m *testing.M) { os.Exit(kubeenv.Main(m)) }
