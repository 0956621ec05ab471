package nodeemu

import (
	"net/http"
	"regexp"
)

// standInDir is where stand-ins record their calls, in the sandbox: <NNN>-<program>.args (the
// arguments, each NUL-terminated) and .env (env -0), NNN counting the calls from 000.
const standInDir = "/var/lib/nodeemu/calls"

var standInName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// StandIn is the shell text of a stand-in for the named program (systemctl, Rancher's
// system-agent-install.sh, the RKE2 installer): it records its arguments and environment for
// the node emulator and does nothing else.
func StandIn(name string) string {
	if !standInName.MatchString(name) {
		panic("nodeemu: stand-in name " + name)
	}
	return `#!/bin/sh
# nodeemu stand-in for ` + name + `: records its arguments and environment, does nothing else.
set -eu
d=` + standInDir + `
mkdir -p "$d"
n=$(find "$d" -name '*.args' | wc -l)
f="$d/$(printf '%03d' "$n")-` + name + `"
: > "$f.args"
for a in "$@"; do printf '%s\0' "$a" >> "$f.args"; done
env -0 > "$f.env"
`
}

// ServeStandIn serves the stand-in for name at every path (GET), as https://get.rke2.io serves
// its installer at /.
func ServeStandIn(name string) http.Handler {
	script := []byte(StandIn(name))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(script)
	})
}
