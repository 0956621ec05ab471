// Command site-agent connects a service provider's infrastructure to the Waldur marketplace.
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
	code := cli.Run(ctx, os.Args[1:], cli.IO{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ})
	stop()
	os.Exit(code)
}
