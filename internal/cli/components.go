package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
)

// componentExtras are component keys passed through to Waldur as they are (those the 8.0.5
// contract accepts); unit_factor stays local, as with the incumbent.
var componentExtras = []string{"description", "min_value", "max_value", "max_available_limit", "default_limit",
	"limit_period", "article_code", "is_boolean", "is_prepaid", "min_prepaid_duration", "max_prepaid_duration"}

// oneOffFlags are the flags of the incumbent's one-off commands (waldur_site_diagnostics,
// waldur_site_load_components, waldur_sync_*: init_configuration in
// waldur_site_agent/common/utils.py takes -m/--mode and -c/--config-file).
type oneOffFlags struct{ configFile, mode string }

func (f *oneOffFlags) register(cmd *cobra.Command) {
	configFlag(cmd, &f.configFile, "waldur-site-agent-config.yaml")
	cmd.Flags().StringVarP(&f.mode, "mode", "m", modes.ModeAll, "accepted for the incumbent's command lines; every mode the offerings configure is checked")
	modeCompletion(cmd, true)
}

// loadComponentsCommand creates or updates every configured component of every offering in
// Waldur.
func (a *app) loadComponentsCommand(name string) *cobra.Command {
	f := &oneOffFlags{}
	cmd := &cobra.Command{Use: name + " -c FILE", Short: "create or update the offerings' components in Waldur", Args: noArgs}
	f.register(cmd)
	cmd.RunE = a.do(func(cmd *cobra.Command, _ []string) int {
		if err := checkMode(f.mode); err != nil {
			return exitCode(a.io, usageErr(err))
		}
		c, err := loadChecked(cmd.Context(), f.configFile, a.io, nil)
		if err != nil {
			return exitCode(a.io, err)
		}
		failures := 0
		for _, off := range c.cfg.Offerings {
			if err := loadComponents(cmd.Context(), c, off, a.io); err != nil {
				fmt.Fprintf(a.io.Stderr, "%s: %v\n", off.Label(), err)
				failures++
			}
		}
		if failures > 0 {
			return ExitFailure
		}
		return ExitOK
	})
	return cmd
}

// loadComponents creates or updates the offering's components; a failed component is
// reported and counted in the returned error.
func loadComponents(ctx context.Context, ch *checked, off config.Offering, io IO) error {
	c, err := agent.ProbeClient(ch.cfg, off, userAgent("load-components"), ch.log)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	o, err := c.GetOffering(ctx, off.UUID, "components")
	if err != nil {
		return fmt.Errorf("cannot read offering: %w", err)
	}
	existing := map[string]string{} // type → uuid
	periods := map[string]*string{} // type → limit_period in Waldur
	for _, wc := range o.Components {
		existing[wc.Type] = wc.UUID
		periods[wc.Type] = wc.LimitPeriod
	}
	var failed []string
	for _, comp := range off.Components {
		body := componentBody(comp)
		verb := "created"
		if uuid, ok := existing[comp.Name]; ok {
			body["uuid"] = uuid
			if _, set := body["limit_period"]; !set && periods[comp.Name] != nil {
				body["limit_period"] = *periods[comp.Name] // keep Waldur's when the config has none
			}
			verb = "updated"
			err = c.UpdateOfferingComponent(ctx, off.UUID, body)
		} else {
			err = c.CreateOfferingComponent(ctx, off.UUID, body)
		}
		if err != nil {
			fmt.Fprintf(io.Stderr, "%s: component %s: %v\n", off.Label(), comp.Name, err)
			failed = append(failed, comp.Name)
			continue
		}
		fmt.Fprintf(io.Stdout, "%s: component %s %s\n", off.Label(), comp.Name, verb)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d component(s) failed: %s", len(failed), strings.Join(failed, ", "))
	}
	return nil
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
