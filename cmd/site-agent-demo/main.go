// Command site-agent-demo is site-agent plus the demo subcommand: the whole loop against a built-in
// Waldur simulator with no external services. It is a separate program so that the release binary
// links no simulator. With no arguments it runs the demo.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/waldur/site-agent/internal/cli"
	"github.com/waldur/site-agent/internal/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	args := os.Args[1:]
	if len(args) == 0 || (args[0] != demo.Command.Name && isFlag(args[0])) {
		args = append([]string{demo.Command.Name}, args...)
	}
	code := cli.Run(ctx, args, cli.IO{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ}, demo.Command)
	stop()
	os.Exit(code)
}

// isFlag reports a demo flag given without the subcommand name (`site-agent-demo --serve ADDR`).
func isFlag(arg string) bool {
	switch arg {
	case "-v", "--v", "-serve", "--serve", "-orders", "--orders":
		return true
	}
	return len(arg) > 8 && (arg[:8] == "--serve=" || arg[:7] == "-serve=")
}
