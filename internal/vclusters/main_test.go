package vclusters

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

func TestMain(m *testing.M) {
	code := kubeenv.Main(m)
	stopSharedKwok()
	if built.path != "" {
		_ = os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}
