package cli

import (
	"context"
	"fmt"
)

func demoCmd(ctx context.Context, args []string, io IO) int {
	fmt.Fprintln(io.Stderr, "demo: not built yet")
	return ExitFailure
}
