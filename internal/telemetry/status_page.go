package telemetry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"
)

// StatusHTML serves the status page: server-rendered HTML that refreshes itself every ten
// seconds (a meta refresh; no script).
func StatusHTML(s *Status) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		if err := statusPage().Execute(&buf, s.Snapshot()); err != nil {
			http.Error(w, "status page: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(buf.Bytes())
	})
}

// StatusJSON serves the same data as JSON, for automation.
func StatusJSON(s *Status) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := json.MarshalIndent(s.Snapshot(), "", "  ")
		if err != nil {
			http.Error(w, "status: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(append(data, '\n'))
	})
}

// statusPage is parsed when first served, not at every start of the program.
var statusPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("status").Funcs(template.FuncMap{
		"at": clock, "when": short, "rel": relative, "secs": seconds, "age": func(now, t time.Time) string { return span(max(now.Sub(t), 0)) },
	}).Parse(statusTemplate))
})

// clock formats t in UTC to the second.
func clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// short formats t for a table cell: the time of day (UTC) on the day of now, else the date too.
func short(now, t time.Time) string {
	if t.UTC().Format(time.DateOnly) == now.UTC().Format(time.DateOnly) {
		return t.UTC().Format(time.TimeOnly)
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// relative says how far t is from now: "12s ago", "in 4m10s".
func relative(now, t time.Time) string {
	d := t.Sub(now)
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d < 0:
		return span(-d) + " ago"
	}
	return "in " + span(d)
}

// span is a duration for people: whole seconds past a minute, tenths below, milliseconds
// below a second.
func span(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") { // 5m0s → 5m
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") { // 1h0m → 1h
		s = s[:len(s)-2]
	}
	return s
}

func seconds(s float64) string { return span(time.Duration(s * float64(time.Second))) }

const statusTemplate = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="10">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>site-agent status</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
header{background:#1d2330;color:#e8ebf0;padding:12px 24px;display:flex;gap:22px;align-items:baseline;flex-wrap:wrap;font-size:13px}
header h1{font-size:20px;margin:0;color:#fff}
header a{color:#9cc3ff}
main{padding:14px 24px;max-width:1500px}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:10px 16px 12px;margin-bottom:14px}
h2{font-size:16px;margin:2px 0 8px}
h2 code{font-weight:normal;color:#6b7280}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eceff3;vertical-align:top}
th{color:#5b6475;font-weight:600;white-space:nowrap}
.muted{color:#6b7280}.facts{font-size:13px;margin:0 0 8px;display:flex;gap:22px;flex-wrap:wrap}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;white-space:nowrap}
.ok{background:#dcfce7;color:#14532d}.error{background:#fee2e2;color:#7f1d1d}.warn{background:#fef3c7;color:#78350f}.idle{background:#e5e7eb;color:#374151}.run{background:#dbeafe;color:#1e3a8a}
.msg{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;word-break:break-word}
code{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px}
</style></head>
<body>
{{- $now := .Generated}}
<header><h1>site-agent</h1><span>version {{.Version}}</span><span>started {{at .Started}} ({{rel $now .Started}})</span>
<span id="role">{{if .Leader.Leading}}<span class="badge ok">working{{if .Leader.Election}}: leader{{end}}</span>{{else}}<span class="badge warn">standby</span>{{end}}</span>
<span class="muted">generated {{at .Generated}}, refreshes every 10 s · <a href="/status.json">JSON</a> · <a href="/metrics">metrics</a></span></header>
<main>
<section id="leader"><h2>Leader</h2>
{{- with .Leader}}{{if .Election}}
<p class="facts"><span>this replica: <b>{{if .Leading}}leader{{else}}standby{{end}}</b> <code>{{.Identity}}</code></span>
<span>lease holder: {{if .Holder}}<code>{{.Holder}}</code>{{else}}<span class="muted">none observed yet</span>{{end}}</span>
<span>lease taken: {{with .Acquired}}{{at .}} ({{rel $now .}}){{else}}<span class="muted">unknown</span>{{end}}</span></p>
{{- else}}<p class="facts"><span>leader election is off: this process does the work</span></p>{{end}}{{end}}
<p class="facts"><span>configuration reloads: {{.Reloads.Succeeded}} applied, {{.Reloads.Failed}} refused{{with .Reloads.Last}}; last {{at .}} ({{rel $now .}}){{end}}</span></p>
</section>
{{range .Offerings}}
<section class="offering" data-uuid="{{.UUID}}"><h2>{{.Name}} <code>{{.UUID}}</code></h2>
<p class="facts"><span>orders pending: <b>{{.Pending}}</b></span><span>in flight: <b>{{len .InFlight}}</b></span>
{{- range .Upstreams}}<span>{{.Upstream}}: {{if .Degraded}}<span class="badge error">degraded</span>{{else}}<span class="badge ok">ok</span>{{end}} <span class="muted">{{.Errors}} failed of {{.Calls}} calls</span></span>{{end}}</p>
<table class="modes"><thead><tr><th>mode</th><th>period</th><th>state</th><th>last cycle (UTC)</th><th>took</th><th>result</th><th>next cycle (UTC)</th><th>cycles (failed)</th></tr></thead><tbody>
{{- range .Modes}}
<tr data-mode="{{.Mode}}"><td><b>{{.Mode}}</b></td><td>{{secs .PeriodSeconds}}</td>
<td>{{if .Running}}<span class="badge run">running</span>{{with .RunningSince}} for {{age $now .}}{{end}}{{else}}<span class="badge idle">idle</span>{{end}}</td>
{{- with .Last}}<td>{{when $now .Finished}} <span class="muted">({{rel $now .Finished}})</span></td><td>{{secs .DurationSeconds}}</td>
<td>{{if eq .Result "ok"}}<span class="badge ok">ok</span>{{else}}<span class="badge error">error</span> <span class="msg">{{.Error}}</span>{{end}}</td>
{{- else}}<td class="muted">none yet</td><td></td><td></td>{{end}}
<td>{{if .Running}}<span class="muted">after this one</span>{{else}}{{with .Next}}{{when $now .}} <span class="muted">({{rel $now .}})</span>{{else}}<span class="muted">not scheduled</span>{{end}}{{end}}</td>
<td>{{.Cycles}} ({{.Failures}})</td></tr>
{{- end}}
</tbody></table>
{{- if .InFlight}}
<table class="orders"><thead><tr><th>order in flight</th><th>type</th><th>resource</th><th>worked on for</th></tr></thead><tbody>
{{- range .InFlight}}<tr><td><code>{{.UUID}}</code></td><td>{{.Type}}</td><td>{{.ResourceName}} <code>{{.ResourceUUID}}</code></td><td>{{age $now .Since}}</td></tr>{{end}}
</tbody></table>{{end}}
{{- if .Listeners}}
<p class="facts">event listeners: {{range .Listeners}}<span>{{.ObjectType}} {{if .Connected}}<span class="badge ok">subscribed</span>{{else}}<span class="badge error">disconnected</span>{{end}} <span class="muted">since {{rel $now .Since}}</span></span>{{end}}</p>{{end}}
</section>
{{else}}<section><h2>Offerings</h2><p class="muted">no offering is configured for the modes this process runs</p></section>
{{end}}
<section id="degraded"><h2>Degraded upstreams</h2>
{{- if .Degraded}}
<table><thead><tr><th>offering</th><th>upstream</th><th>failed calls</th><th>last error</th><th>last success</th><th>what failed</th></tr></thead><tbody>
{{- range .Degraded}}<tr><td>{{.OfferingName}}</td><td><b>{{.Upstream}}</b></td><td>{{.Errors}} of {{.Calls}} calls</td>
<td>{{with .LastErrorAt}}{{rel $now .}}{{end}}</td><td>{{with .LastOK}}{{rel $now .}}{{else}}<span class="muted">never</span>{{end}}</td><td class="msg">{{.LastError}}</td></tr>{{end}}
</tbody></table>
{{- else}}<p class="muted">none: every upstream answered its last call</p>{{end}}
</section>
<section id="errors"><h2>Last errors <span class="muted">({{len .Errors}} shown, {{.ErrorsTotal}} since start)</span></h2>
{{- if .Errors}}
<table><thead><tr><th>when (UTC)</th><th>offering</th><th>where</th><th>message</th></tr></thead><tbody>
{{- range .Errors}}<tr><td style="white-space:nowrap">{{when $now .At}} <span class="muted">({{rel $now .At}})</span></td><td>{{.Offering}}</td><td>{{.Source}}</td><td class="msg">{{.Message}}</td></tr>{{end}}
</tbody></table>
{{- else}}<p class="muted">none</p>{{end}}
</section>
</main></body></html>
`
