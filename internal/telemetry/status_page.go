package telemetry

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// StatusHTML serves the status page: server-rendered HTML that refreshes itself every ten
// seconds (a meta refresh; no script). It is written by renderStatus, not html/template:
// executing a Go template reaches reflect's MethodByName, which makes the linker keep every
// exported method of the program (golang/go#62257), megabytes of binary and of idle memory.
func StatusHTML(s *Status) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := renderStatus(s.Snapshot())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, page)
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

// age is how long ago t was, never negative.
func age(now, t time.Time) string { return span(max(now.Sub(t), 0)) }

// statusHead is the page up to its body: the refresh and the style sheet.
const statusHead = `<!doctype html>
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
`
