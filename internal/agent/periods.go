package agent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/modes"
)

// Periods checks mode (a registered mode or modes.ModeAll) and resolves the period of every
// mode it runs, before the configuration is read: flagValue (--period) when set, else the mode's
// variable in environ (the incumbent's, in minutes), else the mode's default.
func Periods(mode string, flagValue time.Duration, environ func() []string) (map[string]time.Duration, error) {
	var specs []modes.Spec
	switch spec, ok := modes.Lookup(mode); {
	case mode == modes.ModeAll:
		specs = modes.Specs()
	case ok:
		specs = []modes.Spec{spec}
	default:
		return nil, fmt.Errorf("unknown mode %q (choose %s or all)", mode, strings.Join(modes.Names(), ", "))
	}
	periods := map[string]time.Duration{}
	for _, spec := range specs {
		p, err := resolvePeriod(spec, flagValue, environ)
		if err != nil {
			return nil, err
		}
		periods[spec.Name] = p
	}
	return periods, nil
}

func resolvePeriod(spec modes.Spec, flagValue time.Duration, environ func() []string) (time.Duration, error) {
	if flagValue < 0 {
		return 0, errors.New("--period must be positive")
	}
	if flagValue > 0 {
		return flagValue, nil
	}
	name := spec.PeriodEnv
	for _, kv := range environ() {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			minutes, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || minutes <= 0 || minutes > 60*24*31 {
				return 0, fmt.Errorf("%s must be a positive number of minutes, got %q", name, v)
			}
			return time.Duration(minutes * float64(time.Minute)), nil
		}
	}
	return spec.Period, nil
}
