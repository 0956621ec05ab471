package config

import (
	"os"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the loader: it must never panic, and any failure must be
// Errors of at least one *Error, each with a key or the file named.
func FuzzParse(f *testing.F) {
	seed, err := os.ReadFile("testdata/incumbent.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("offerings: [{name: a, backend_components: {cpu: 3}}]"))
	f.Add([]byte("offerings:\n  - backend_settings: [1,2]\n    waldur_api_url: 5\n"))
	f.Add([]byte("reporting_periods: 1e309\noffe\x00rings: ~"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _, err := Parse("fuzz.yaml", data, Options{Environ: noEnv})
		if err != nil {
			es, ok := err.(Errors)
			if !ok || len(es) == 0 {
				t.Fatalf("error %T %v", err, err)
			}
			for _, e := range es {
				if e.Path != "fuzz.yaml" || e.Problem == "" {
					t.Fatalf("problem without file or text: %+v", e)
				}
			}
			return
		}
		if len(cfg.Offerings) == 0 {
			t.Fatal("a valid config has offerings")
		}
	})
}
