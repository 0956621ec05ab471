package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildInfo is what `version` prints: the stamps (cli.Version, Commit, BuildDate), completed from
// the binary's build information where a stamp is missing — the module version for `go install
// …@v1.2.3`, vcs.revision, vcs.time and vcs.modified when it was built in a git checkout.
type buildInfo struct {
	version, commit, date, goVersion, platform string
	modified                                   bool
}

func readBuildInfo() buildInfo {
	b := buildInfo{version: Version, commit: Commit, date: BuildDate, goVersion: runtime.Version(),
		platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.goVersion = info.GoVersion
	if (b.version == "" || b.version == "dev") && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.commit == "" {
				b.commit = s.Value
			}
		case "vcs.time":
			if b.date == "" {
				b.date = s.Value
			}
		case "vcs.modified":
			b.modified = b.modified || s.Value == "true"
		}
	}
	return b
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// versionLine is the one line of --version.
func versionLine() string {
	b := readBuildInfo()
	return fmt.Sprintf("%s (commit %s, built %s, %s)", b.version, b.commitText(), orUnknown(b.date), b.goVersion)
}

func (b buildInfo) commitText() string {
	if b.modified {
		return orUnknown(b.commit) + "+modified"
	}
	return orUnknown(b.commit)
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{Use: "version", Short: "print the version, commit, build date and Go version", Args: noArgs,
		RunE: a.do(func(*cobra.Command, []string) int {
			b := readBuildInfo()
			fmt.Fprintf(a.io.Stdout, "site-agent %s\n  commit:   %s\n  built:    %s\n  go:       %s\n  platform: %s\n",
				b.version, b.commitText(), orUnknown(b.date), b.goVersion, b.platform)
			return ExitOK
		})}
}
