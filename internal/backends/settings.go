package backends

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/yaml11"
)

// Settings is a backend_settings section. It may hold credentials (resolved from Vault or
// written inline) until a backend decodes them into secret.Secret, so it never prints its values.
type Settings map[string]any

// Format implements fmt.Formatter: only the keys are shown.
func (s Settings) Format(f fmt.State, _ rune) {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(f, "backend_settings{%s}", strings.Join(keys, " "))
}

// CoreSettingKeys are backend_settings keys read by the agent core rather than by a backend; a
// backend's strict decoding ignores them.
var CoreSettingKeys = []string{
	"allocation_prefix", "project_prefix", "customer_prefix", "check_backend_id_uniqueness",
	"check_all_offerings", "backend_id_max_retries", "cluster_name", "soft_delete",
	"default_account", "default_homedir_umask", "enable_user_homedir_account_creation",
	"homedir_base_path", "homedir_quota", "periodic_limits", "target_api_url", "target_api_token",
}

// DecodeSettings decodes a backend_settings map into out (a pointer to a struct with
// `mapstructure` tags). Strings decode into secret.Secret fields; boolean fields take what the
// incumbent's PyYAML and pydantic read as booleans (yes/no, on/off, … — see internal/yaml11). Keys that out does not declare
// and that are not core keys are returned as warnings ("backend_settings.<key>"), not errors:
// the incumbent accepted them silently, and a typo must not stop a site. A value of the wrong
// type is an error naming the key.
func DecodeSettings(in Settings, out any) (warnings []string, err error) {
	var md mapstructure.Metadata
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:           out,
		Metadata:         &md,
		TagName:          "mapstructure",
		WeaklyTypedInput: false,
		DecodeHook:       mapstructure.ComposeDecodeHookFunc(secret.DecodeHook, boolHook, mapstructure.StringToTimeDurationHookFunc()),
	})
	if err != nil {
		return nil, err
	}
	if err := dec.Decode(map[string]any(in)); err != nil {
		return nil, fmt.Errorf("backend_settings: %s", cleanDecodeError(err))
	}
	core := map[string]bool{}
	for _, k := range CoreSettingKeys {
		core[k] = true
	}
	for _, k := range md.Unused {
		top := strings.SplitN(k, ".", 2)[0]
		if !core[top] {
			warnings = append(warnings, "backend_settings."+k)
		}
	}
	sort.Strings(warnings)
	return warnings, nil
}

// boolHook reads yes/no, on/off and the like into boolean fields (and *bool ones, whose
// element the decoder asks for again); other values reach the decoder unchanged, so its error
// names the key.
func boolHook(_, to reflect.Type, data any) (any, error) {
	if to.Kind() != reflect.Bool {
		return data, nil
	}
	if b, ok := yaml11.Bool(data); ok {
		return b, nil
	}
	return data, nil
}

// cleanDecodeError turns mapstructure's multi-line messages into one line.
func cleanDecodeError(err error) string {
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	msg = strings.TrimPrefix(msg, "decoding failed due to the following error(s):; ; ")
	return msg
}
