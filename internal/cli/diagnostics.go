package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// diagFlags are diagnostics' flags: the incumbent's -c and -m (waldur_site_diagnostics), the
// deadline of each check and the output format.
type diagFlags struct {
	oneOffFlags
	timeout time.Duration
	output  string
}

// diagnosticsCommand checks, for every offering at once, Waldur access and every upstream of its
// backends, each check under its own deadline, and prints each line as its check finishes.
func (a *app) diagnosticsCommand(name string) *cobra.Command {
	f := &diagFlags{}
	cmd := &cobra.Command{Use: name + " -c FILE [--timeout 5s] [--output text|json]",
		Short: "check Waldur access and every backend upstream of every offering, at once", Args: noArgs}
	f.register(cmd)
	cmd.Flags().DurationVar(&f.timeout, "timeout", 5*time.Second, "deadline of each check (one upstream of one offering)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "text (lines as checks finish) or json (one document at the end)")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion("text", "json"))
	cmd.RunE = a.do(func(cmd *cobra.Command, _ []string) int {
		switch {
		case f.output != "text" && f.output != "json":
			return exitCode(a.io, usageErr(fmt.Errorf("--output: want text or json, got %q", f.output)))
		case f.timeout <= 0:
			return exitCode(a.io, usageErr(fmt.Errorf("--timeout: want a positive duration such as 5s, got %s", f.timeout)))
		}
		if err := checkMode(f.mode); err != nil {
			return exitCode(a.io, usageErr(err))
		}
		out := newDiagOutput(a.io, f)
		// vault: references are resolved under the same deadline as a check, a person waiting.
		lctx, cancel := context.WithTimeout(upstream.Probing(cmd.Context()), f.timeout)
		c, err := loadChecked(lctx, f.configFile, a.io, nil)
		cancel()
		if err != nil {
			return out.invalid(err)
		}
		out.start(c)
		probes, closers := collectProbes(c)
		runProbes(cmd.Context(), probes, f.timeout, out.add)
		for _, cl := range closers {
			_ = cl.Close()
		}
		return out.finish()
	})
	return cmd
}

// diagOutput prints the report: text lines as checks finish, or one JSON document at the end
// (jsonReport). Every detail is scrubbed of secrets.
type diagOutput struct {
	io       IO
	json     bool
	timeout  time.Duration
	report   jsonReport
	problems int
}

// jsonReport is the --output json document (README, "diagnostics"):
//
//	{"version": "1.2.3", "config": "/etc/waldur/config.yaml", "timeout_seconds": 5,
//	 "warnings": ["…"],
//	 "errors": [{"offering": "offering \"HPC\" (offerings[0])", "key": "offerings[0].backend_settings.cluster_id", "problem": "is required …"}],
//	 "checks": [{"offering": "HPC", "offering_uuid": "…", "upstream": "rancher", "check": "rancher api",
//	             "ok": false, "detail": "…", "seconds": 0.003}],
//	 "problems": 1, "ok": false}
//
// errors are configuration problems (exit code 2: nothing was checked); checks come in the order of
// the configuration (offering, then upstream, then check), whatever order they finished in;
// seconds is the wall time of the check's upstream probe.
type jsonReport struct {
	Version        string        `json:"version"`
	Config         string        `json:"config"`
	TimeoutSeconds float64       `json:"timeout_seconds"`
	Warnings       []string      `json:"warnings"`
	Errors         []jsonProblem `json:"errors"`
	Checks         []jsonCheck   `json:"checks"`
	Problems       int           `json:"problems"`
	OK             bool          `json:"ok"`
}

type jsonProblem struct {
	Offering string `json:"offering,omitempty"`
	Key      string `json:"key,omitempty"`
	Problem  string `json:"problem"`
}

type jsonCheck struct {
	Offering     string  `json:"offering"`
	OfferingUUID string  `json:"offering_uuid"`
	Upstream     string  `json:"upstream"`
	Check        string  `json:"check"`
	OK           bool    `json:"ok"`
	Detail       string  `json:"detail"`
	Seconds      float64 `json:"seconds"`
	seq, line    int
}

func newDiagOutput(io IO, f *diagFlags) *diagOutput {
	return &diagOutput{io: io, json: f.output == "json", timeout: f.timeout, report: jsonReport{Version: Version, Config: f.configFile,
		TimeoutSeconds: f.timeout.Seconds(), Warnings: []string{}, Errors: []jsonProblem{}, Checks: []jsonCheck{}}}
}

// invalid reports configuration problems: to stderr (text), or as the document's errors.
func (o *diagOutput) invalid(err error) int {
	if !o.json {
		return exitCode(o.io, err)
	}
	var es config.Errors
	if errors.As(err, &es) {
		for _, e := range es {
			o.report.Errors = append(o.report.Errors, jsonProblem{Offering: e.Offering, Key: e.Key, Problem: secret.Scrub(e.Problem)})
		}
	} else {
		o.report.Errors = append(o.report.Errors, jsonProblem{Problem: secret.Scrub(err.Error())})
	}
	o.print()
	return ExitUsage
}

func (o *diagOutput) start(c *checked) {
	o.report.Config = c.cfg.Path
	for _, w := range c.warnings {
		o.report.Warnings = append(o.report.Warnings, secret.Scrub(w))
	}
	if o.json {
		return
	}
	fmt.Fprintf(o.io.Stdout, "site-agent %s diagnostics for %s: %d offering(s), every upstream at once, %s per check\n",
		Version, c.cfg.Path, len(c.cfg.Offerings), o.timeout)
	for _, w := range o.report.Warnings {
		fmt.Fprintln(o.io.Stdout, "  warning:", w)
	}
}

// add takes one probe's lines as it finishes.
func (o *diagOutput) add(r result) {
	name := r.probe.off.Name
	if name == "" {
		name = fmt.Sprintf("offerings[%d]", r.probe.off.Index)
	}
	for i, c := range r.checks {
		detail := secret.Scrub(c.Detail)
		if !c.OK {
			o.problems++
		}
		o.report.Checks = append(o.report.Checks, jsonCheck{Offering: name, OfferingUUID: r.probe.off.UUID, Upstream: r.probe.upstream,
			Check: c.Name, OK: c.OK, Detail: detail, Seconds: r.took.Seconds(), seq: r.probe.seq, line: i})
		if !o.json {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(o.io.Stdout, "[%s] %s · %s · %s: %s\n", mark, name, r.probe.upstream, c.Name, detail)
		}
	}
}

// finish prints the summary (text) or the document (json): exit 1 when a check failed.
func (o *diagOutput) finish() int {
	o.report.Problems, o.report.OK = o.problems, o.problems == 0
	if o.json {
		sort.SliceStable(o.report.Checks, func(i, j int) bool {
			a, b := o.report.Checks[i], o.report.Checks[j]
			return a.seq < b.seq || a.seq == b.seq && a.line < b.line
		})
		o.print()
	} else if o.problems > 0 {
		fmt.Fprintf(o.io.Stdout, "%d problem(s) found\n", o.problems)
	} else {
		fmt.Fprintln(o.io.Stdout, "all checks passed")
	}
	if o.problems > 0 {
		return ExitFailure
	}
	return ExitOK
}

func (o *diagOutput) print() {
	enc := json.NewEncoder(o.io.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(o.report)
}
