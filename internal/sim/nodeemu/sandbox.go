package nodeemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Sandbox is a node's root file system in which its cloud-init runs for real: write_files land
// under Root, and each runcmd entry runs with the host's /bin/sh, curl, sed, base64, mkdir, cat…
// (/usr bind-mounted read-only) chrooted into Root, in a private mount namespace (unshare), so the
// script's absolute paths (/etc/vault/secret-id, /etc/rancher/rke2/config.yaml, the data dir)
// are the sandbox's. The network is the host's: the script reaches Vault, Rancher and the
// installers at the addresses in the user data. Only the installers (served over HTTP, StandIn)
// and systemctl (/usr/local/bin/systemctl, first on PATH) are stand-ins, which record their
// arguments and environment (Run.Calls). It needs root, or user namespaces (SandboxAvailable).
type Sandbox struct {
	Root    string
	Timeout time.Duration // of each runcmd entry (default 3 min: curl --retry 10 --retry-delay 5)
}

// sandboxPath is the PATH the script gets: a Debian node's root PATH.
const sandboxPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// hostDirs are bind-mounted read-only into the sandbox (when the host has them).
var hostDirs = []string{"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/share"}

// enterScript runs in the new mount namespace: it mounts the host's programs and /dev/null into
// the root ($1) and runs the rest of the arguments chrooted, with a clean environment.
const enterScript = `set -eu
root=$1; shift
for d in ` + "$DIRS" + `; do
	[ -d "$d" ] || continue
	mount --bind "$d" "$root$d"
	mount -o remount,bind,ro "$root$d"
done
mount --bind /dev/null "$root/dev/null"
exec chroot "$root" /usr/bin/env -i PATH=` + sandboxPath + ` HOME=/root LANG=C.UTF-8 "$@"
`

// SandboxAvailable says why sandboxes cannot run here (nil: they can).
func SandboxAvailable() error {
	if errPlatform != nil {
		return errPlatform
	}
	for _, p := range []string{"unshare", "mount", "chroot", "sh", "curl", "sed", "base64", "env"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("nodeemu sandbox: %s is not installed", p)
		}
	}
	if os.Geteuid() != 0 {
		if out, err := exec.Command("unshare", "--user", "--map-root-user", "--mount", "true").CombinedOutput(); err != nil {
			return fmt.Errorf("nodeemu sandbox: not root and no user namespaces: %v %s", err, bytes.TrimSpace(out))
		}
	}
	return nil
}

// NewSandbox lays out a root file system in dir: /usr with empty mount points for the host's
// programs, /bin, /sbin, /lib and /lib64 as the links a merged-/usr Debian has, the systemctl
// stand-in, and /etc, /var/lib, /run, /tmp and /root.
func NewSandbox(dir string) (*Sandbox, error) {
	for _, d := range append([]string{"/usr/local/bin", "/usr/local/sbin", "/etc", "/var/lib", "/run", "/tmp", "/root", "/dev"}, hostDirs...) {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	for _, l := range []string{"bin", "sbin", "lib", "lib64"} {
		if err := os.Symlink("usr/"+l, filepath.Join(dir, l)); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "dev", "null"), nil, 0o666); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "usr/local/bin/systemctl"), []byte(StandIn("systemctl")), 0o755); err != nil {
		return nil, err
	}
	return &Sandbox{Root: dir, Timeout: 3 * time.Minute}, nil
}

// Run is what one cloud-init run did: the commands' output and the stand-ins' calls, in order.
type Run struct {
	Output string
	Calls  []Call
	root   string
}

// Call is one run of a stand-in.
type Call struct {
	Prog string
	Args []string
	Env  map[string]string
}

// cloudConfig is the part of #cloud-config a node's bootstrap needs (bootcmd, disk_setup,
// fs_setup and mounts prepare disks, which a sandbox has none of).
type cloudConfig struct {
	WriteFiles []struct {
		Path, Content, Permissions, Encoding string
	} `yaml:"write_files"`
	RunCmd []any `yaml:"runcmd"`
}

// CloudInit does what cloud-init does with the user data: write_files, then each runcmd entry
// (a list is run as it stands, a string with sh -c), stopping at the first that fails.
func (s *Sandbox) CloudInit(ctx context.Context, userData []byte) (*Run, error) {
	if !bytes.HasPrefix(userData, []byte("#cloud-config\n")) {
		return nil, errors.New("user data is not #cloud-config")
	}
	var cc cloudConfig
	if err := yaml.Unmarshal(userData, &cc); err != nil {
		return nil, fmt.Errorf("user data is not YAML: %w", err)
	}
	for _, f := range cc.WriteFiles {
		if err := s.writeFile(f.Path, f.Content, f.Permissions, f.Encoding); err != nil {
			return nil, err
		}
	}
	run := &Run{root: s.Root}
	for _, c := range cc.RunCmd {
		argv, err := runcmdArgv(c)
		if err != nil {
			return run, err
		}
		out, err := s.exec(ctx, argv)
		run.Output += out
		if err != nil {
			return run, fmt.Errorf("runcmd %v: %w\n%s", argv, err, tail(run.Output, 20))
		}
	}
	calls, err := readCalls(s.Root)
	run.Calls = calls
	return run, err
}

func runcmdArgv(c any) ([]string, error) {
	switch v := c.(type) {
	case string:
		return []string{"/bin/sh", "-c", v}, nil
	case []any:
		var argv []string
		for _, a := range v {
			s, ok := a.(string)
			if !ok {
				return nil, fmt.Errorf("runcmd entry %v: not a list of strings", v)
			}
			argv = append(argv, s)
		}
		if len(argv) > 0 {
			return argv, nil
		}
	}
	return nil, fmt.Errorf("runcmd entry %v is neither a string nor a list", c)
}

// writeFile is cloud-init's write_files for one file (default permissions 0644, plain text).
func (s *Sandbox) writeFile(path, content, perm, encoding string) error {
	if encoding != "" && encoding != "text/plain" {
		return fmt.Errorf("write_files %s: encoding %q is not supported here", path, encoding)
	}
	mode := uint64(0o644)
	if perm != "" {
		var err error
		if mode, err = strconv.ParseUint(perm, 8, 32); err != nil {
			return fmt.Errorf("write_files %s: permissions %q: %w", path, perm, err)
		}
	}
	dst, err := s.path(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dst, []byte(content), os.FileMode(mode)); err != nil {
		return err
	}
	return os.Chmod(dst, os.FileMode(mode)) // WriteFile's mode is filtered by the umask
}

// path maps an absolute path of the node to the host.
func (s *Sandbox) path(p string) (string, error) { return rootPath(s.Root, p) }

func rootPath(root, p string) (string, error) {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return "", fmt.Errorf("%q is not a clean absolute path", p)
	}
	return filepath.Join(root, p), nil
}

// exec runs argv chrooted into the sandbox in a mount namespace of its own.
func (s *Sandbox) exec(ctx context.Context, argv []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	args := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		args = append([]string{"--user", "--map-root-user"}, args...)
	}
	script := strings.Replace(enterScript, "$DIRS", strings.Join(hostDirs, " "), 1)
	args = append(append(args, "--", "/bin/sh", "-c", script, "sh", s.Root), argv...)
	cmd := exec.CommandContext(ctx, "unshare", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Env = &out, &out, []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	setGroup(cmd)
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return out.String(), err
}

// File reads a file the run left (an absolute path of the node).
func (r *Run) File(path string) ([]byte, error) {
	p, err := rootPath(r.root, path)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// Mode is a file's permission bits (an absolute path of the node).
func (r *Run) Mode(path string) (fs.FileMode, error) {
	p, err := rootPath(r.root, path)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return st.Mode().Perm(), nil
}

// Exists reports whether the node has a file at path.
func (r *Run) Exists(path string) bool {
	_, err := r.Mode(path)
	return err == nil
}

// readCalls reads the stand-ins' records in the order they ran.
func readCalls(root string) ([]Call, error) {
	dir := filepath.Join(root, standInDir)
	names, err := filepath.Glob(filepath.Join(dir, "*.args"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Call
	for _, n := range names {
		base := strings.TrimSuffix(n, ".args")
		args, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		env, err := os.ReadFile(base + ".env")
		if err != nil {
			return nil, err
		}
		_, prog, _ := strings.Cut(filepath.Base(base), "-")
		c := Call{Prog: prog, Args: splitNUL(args), Env: map[string]string{}}
		for _, kv := range splitNUL(env) {
			k, v, _ := strings.Cut(kv, "=")
			c.Env[k] = v
		}
		out = append(out, c)
	}
	return out, nil
}

// splitNUL splits NUL-terminated fields.
func splitNUL(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	var out []string
	for _, f := range bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0}) {
		out = append(out, string(f))
	}
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
