package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/waldur/site-agent/internal/backends"
)

// componentExtras are component keys passed through to Waldur as they are (those the 8.0.5
// contract accepts); unit_factor stays local, as with the incumbent.
var componentExtras = []string{"description", "min_value", "max_value", "max_available_limit", "default_limit",
	"limit_period", "article_code", "is_boolean", "is_prepaid", "min_prepaid_duration", "max_prepaid_duration"}

// loadComponentsCmd creates or updates every configured component of every offering in Waldur.
func loadComponentsCmd(ctx context.Context, args []string, io IO) int {
	fs := flag.NewFlagSet("load-components", flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	var f runFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	cfg, _, code := loadConfig(f.configFile, nil, io)
	if code != ExitOK {
		return code
	}
	failures := 0
	for _, off := range cfg.Offerings {
		c, err := newProbeClient(cfg, off, "load-components")
		if err != nil {
			fmt.Fprintf(io.Stderr, "%s: %v\n", off.Label(), err)
			failures++
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		o, err := c.GetOffering(cctx, off.UUID, "components")
		if err != nil {
			cancel()
			fmt.Fprintf(io.Stderr, "%s: cannot read offering: %v\n", off.Label(), err)
			failures++
			continue
		}
		existing := map[string]string{} // type → uuid
		periods := map[string]*string{} // type → limit_period in Waldur
		for _, wc := range o.Components {
			existing[wc.Type] = wc.UUID
			periods[wc.Type] = wc.LimitPeriod
		}
		for _, comp := range off.Components {
			body := componentBody(comp)
			verb := "created"
			if uuid, ok := existing[comp.Name]; ok {
				body["uuid"] = uuid
				if _, set := body["limit_period"]; !set && periods[comp.Name] != nil {
					body["limit_period"] = *periods[comp.Name] // keep Waldur's when the config has none
				}
				verb = "updated"
				err = c.UpdateOfferingComponent(cctx, off.UUID, body)
			} else {
				err = c.CreateOfferingComponent(cctx, off.UUID, body)
			}
			if err != nil {
				fmt.Fprintf(io.Stderr, "%s: component %s: %v\n", off.Label(), comp.Name, err)
				failures++
				continue
			}
			fmt.Fprintf(io.Stdout, "%s: component %s %s\n", off.Label(), comp.Name, verb)
		}
		cancel()
	}
	if failures > 0 {
		return ExitFailure
	}
	return ExitOK
}

func componentBody(c backends.Component) map[string]any {
	body := map[string]any{"type": c.Name, "name": c.Label, "measured_unit": c.MeasuredUnit, "billing_type": c.AccountingType}
	if c.Limit != nil {
		body["limit_amount"] = int64(*c.Limit)
	}
	for _, k := range componentExtras {
		if v, ok := c.Settings[k]; ok && v != nil {
			body[k] = v
		}
	}
	if c.AccountingType == "one" {
		if _, set := body["is_prepaid"]; !set {
			body["is_prepaid"] = true
		}
	}
	return body
}
