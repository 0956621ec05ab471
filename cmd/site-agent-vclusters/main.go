// Command site-agent-vclusters is the virtual-clusters load tool (internal/vclusters): many
// lightweight clusters in one main API server, imported into Rancher and connected over
// Rancher's own tunnels. It is a program of its own so that the release binary of the agent
// links neither the tool nor remotedialer nor net/http/pprof.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/waldur/site-agent/internal/vclusters"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := vclusters.Command(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}
