package vclusters

import (
	"flag"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/rawbytes"
	"github.com/knadh/koanf/v2"

	"github.com/waldur/site-agent/internal/secret"
)

// envKeys maps the environment variables the command reads to configuration keys.
var envKeys = map[string]string{
	"SITE_AGENT_VC_RANCHER_URL":   "rancher.url",
	"SITE_AGENT_VC_RANCHER_TOKEN": "rancher.token",
	"SITE_AGENT_VC_KUBECONFIG":    "main_api.kubeconfig",
	"SITE_AGENT_VC_STATE_DIR":     "state_dir",
	"SITE_AGENT_VC_LISTEN":        "listen",
	"SITE_AGENT_VC_API_TOKEN":     "api_token",
	"SITE_AGENT_VC_LOG_LEVEL":     "log_level",
}

// flagSet holds the command's flags; only flags given on the command line override.
type flagSet struct {
	fs     *flag.FlagSet
	config string
	keys   map[string]string // flag name → configuration key
}

func newFlagSet() *flagSet {
	f := &flagSet{fs: flag.NewFlagSet("site-agent-vclusters", flag.ContinueOnError), keys: map[string]string{}}
	f.fs.StringVar(&f.config, "c", "", "configuration file (YAML)")
	f.fs.StringVar(&f.config, "config", "", "same as -c")
	for name, spec := range map[string][2]string{
		"listen":                  {"listen", "HTTP API address (loopback only; default 127.0.0.1:9090)"},
		"state-dir":               {"state_dir", "directory for state.json, the proxy CA and a started main API server"},
		"log-level":               {"log_level", "debug, info, warn or error"},
		"kubeconfig":              {"main_api.kubeconfig", "kubeconfig of the main API server"},
		"kube-apiserver":          {"main_api.start.kube_apiserver", "start the main API server from this kube-apiserver binary"},
		"etcd":                    {"main_api.start.etcd", "etcd binary for a started main API server"},
		"kube-controller-manager": {"main_api.start.kube_controller_manager", "optional kube-controller-manager binary"},
		"rancher-url":             {"rancher.url", "Rancher server URL"},
		"rancher-ca-file":         {"rancher.ca_file", "CA bundle trusted for Rancher"},
		"kwok":                    {"kwok.binary", "kwok binary run as the main API server's kubelet stand-in (scripts/kwok/build.sh)"},
		"kwok-mode":               {"kwok.mode", "run (the tool runs kwok), external (a kwok already runs) or off"},
	} {
		f.fs.String(name, "", spec[1])
		f.keys[name] = spec[0]
	}
	f.fs.Bool("pprof", false, "serve /debug/pprof/ on the API listener")
	f.keys["pprof"] = "pprof"
	f.fs.Bool("rancher-insecure", false, "do not verify Rancher's certificate")
	f.keys["rancher-insecure"] = "rancher.insecure"
	return f
}

// overrides are the configuration keys set by flags that were given.
func (f *flagSet) overrides() map[string]any {
	out := map[string]any{}
	f.fs.Visit(func(fl *flag.Flag) {
		if key, ok := f.keys[fl.Name]; ok {
			if g, ok := fl.Value.(flag.Getter); ok {
				out[key] = g.Get()
			}
		}
	})
	return out
}

// LoadConfig merges defaults ← file ← environment ← flags and validates the result.
func LoadConfig(path string, environ []string, flags map[string]any) (Config, error) {
	k := koanf.New(".")
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, &ConfigError{Key: "-c", Problem: err.Error()}
		}
		if err := k.Load(rawbytes.Provider(data), yaml.Parser()); err != nil {
			return Config{}, &ConfigError{Key: path, Problem: "not valid YAML: " + err.Error()}
		}
	}
	env := map[string]any{}
	for _, kv := range environ {
		name, v, _ := strings.Cut(kv, "=")
		if key, ok := envKeys[name]; ok && v != "" {
			env[key] = v
		}
	}
	for _, m := range []map[string]any{env, flags} {
		if err := k.Load(confmap.Provider(m, "."), nil); err != nil {
			return Config{}, err
		}
	}
	cfg := Defaults()
	if err := decode(k.Raw(), &cfg); err != nil {
		return Config{}, err
	}
	for _, p := range []*string{&cfg.StateDir, &cfg.MainAPI.Kubeconfig, &cfg.MainAPI.Start.KubeAPIServer, &cfg.MainAPI.Start.Etcd,
		&cfg.MainAPI.Start.KubeControllerManager, &cfg.Rancher.CAFile, &cfg.Kwok.Binary} {
		*p = expandHome(*p)
	}
	return cfg, cfg.Validate()
}

func decode(raw map[string]any, out *Config) error {
	var md mapstructure.Metadata
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result: out, Metadata: &md, TagName: "koanf", ZeroFields: true, WeaklyTypedInput: true,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(secret.DecodeHook, mapstructure.StringToTimeDurationHookFunc()),
	})
	if err != nil {
		return err
	}
	if err := dec.Decode(raw); err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		return &ConfigError{Key: "configuration", Problem: strings.TrimPrefix(msg, "decoding failed due to the following error(s):; ; ")}
	}
	if len(md.Unused) > 0 {
		return &ConfigError{Key: md.Unused[0], Problem: "unknown key"}
	}
	return nil
}

// expandHome turns a leading "~/" into the user's home directory.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}
