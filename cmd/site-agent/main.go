// Command site-agent connects a service provider's infrastructure to the Waldur marketplace. Called
// by one of the incumbent's command names (a link such as waldur_site_diagnostics), it is that
// command.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/waldur/site-agent/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args, cli.IO{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ})
	stop()
	os.Exit(code)
}
