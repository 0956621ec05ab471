package telemetry

import (
	"html"
	"strconv"
	"strings"
	"time"
)

// pageWriter writes the status page. Markup is the program's own; every value from the
// snapshot goes through put, which escapes it for HTML text and for double-quoted attribute
// values alike (html.EscapeString: & < > " '). The page has no script, no style and no URL
// built from a value, the contexts that would need other escaping.
type pageWriter struct {
	b   strings.Builder
	now time.Time
}

// put writes markup with each %s replaced, in order, by one of values, escaped. A markup
// holding fewer %s than values is a programming error and panics.
func (w *pageWriter) put(markup string, values ...string) {
	for _, v := range values {
		i := strings.Index(markup, "%s")
		if i < 0 {
			panic("status page: more values than %s in " + markup)
		}
		w.b.WriteString(markup[:i])
		w.b.WriteString(html.EscapeString(v))
		markup = markup[i+2:]
	}
	w.b.WriteString(markup)
}

func itoa(n int) string { return strconv.Itoa(n) }

// badge is a badge's markup (class and text are the program's own).
func badge(class, text string) string { return `<span class="badge ` + class + `">` + text + `</span>` }

// renderStatus is the status page of one snapshot.
func renderStatus(s Snapshot) string {
	w := &pageWriter{now: s.Generated}
	w.b.Grow(8 << 10)
	w.b.WriteString(statusHead)
	w.header(s)
	w.leader(s)
	for _, o := range s.Offerings {
		w.offering(o)
	}
	if len(s.Offerings) == 0 {
		w.put(`<section><h2>Offerings</h2><p class="muted">no offering is configured for the modes this process runs</p></section>` + "\n")
	}
	w.put("\n")
	w.degraded(s.Degraded)
	w.errors(s)
	w.put("</main></body></html>\n")
	return w.b.String()
}

func (w *pageWriter) header(s Snapshot) {
	w.put("<header><h1>site-agent</h1><span>version %s</span><span>started %s (%s)</span>\n<span id=\"role\">",
		s.Version, clock(s.Started), relative(w.now, s.Started))
	switch {
	case s.Leader.Leading && s.Leader.Election:
		w.put(badge("ok", "working: leader"))
	case s.Leader.Leading:
		w.put(badge("ok", "working"))
	default:
		w.put(badge("warn", "standby"))
	}
	w.put("</span>\n<span class=\"muted\">generated %s, refreshes every 10 s · <a href=\"/status.json\">JSON</a> · <a href=\"/metrics\">metrics</a></span></header>\n<main>\n",
		clock(s.Generated))
}

func (w *pageWriter) leader(s Snapshot) {
	l := s.Leader
	w.put(`<section id="leader"><h2>Leader</h2>`)
	if l.Election {
		role := "standby"
		if l.Leading {
			role = "leader"
		}
		w.put("\n<p class=\"facts\"><span>this replica: <b>%s</b> <code>%s</code></span>\n<span>lease holder: ", role, l.Identity)
		if l.Holder != "" {
			w.put("<code>%s</code>", l.Holder)
		} else {
			w.put(`<span class="muted">none observed yet</span>`)
		}
		w.put("</span>\n<span>lease taken: ")
		if l.Acquired != nil {
			w.put("%s (%s)", clock(*l.Acquired), relative(w.now, *l.Acquired))
		} else {
			w.put(`<span class="muted">unknown</span>`)
		}
		w.put("</span></p>")
	} else {
		w.put(`<p class="facts"><span>leader election is off: this process does the work</span></p>`)
	}
	r := s.Reloads
	w.put("\n<p class=\"facts\"><span>configuration reloads: %s applied, %s refused", itoa(r.Succeeded), itoa(r.Failed))
	if r.Last != nil {
		w.put("; last %s (%s)", clock(*r.Last), relative(w.now, *r.Last))
	}
	w.put("</span></p>\n</section>\n")
}

func (w *pageWriter) offering(o OfferingView) {
	w.put("\n<section class=\"offering\" data-uuid=\"%s\"><h2>%s <code>%s</code></h2>\n", o.UUID, o.Name, o.UUID)
	w.put(`<p class="facts"><span>orders pending: <b>%s</b></span><span>in flight: <b>%s</b></span>`, itoa(o.Pending), itoa(len(o.InFlight)))
	for _, u := range o.Upstreams {
		w.put("<span>%s: ", u.Upstream)
		if u.Degraded {
			w.put(badge("error", "degraded"))
		} else {
			w.put(badge("ok", "ok"))
		}
		w.put(` <span class="muted">%s failed of %s calls</span></span>`, itoa(u.Errors), itoa(u.Calls))
	}
	w.put("</p>\n<table class=\"modes\"><thead><tr><th>mode</th><th>period</th><th>state</th><th>last cycle (UTC)</th><th>took</th><th>result</th><th>next cycle (UTC)</th><th>cycles (failed)</th></tr></thead><tbody>")
	for _, m := range o.Modes {
		w.mode(m)
	}
	w.put("\n</tbody></table>")
	if len(o.InFlight) > 0 {
		w.put("\n<table class=\"orders\"><thead><tr><th>order in flight</th><th>type</th><th>resource</th><th>worked on for</th></tr></thead><tbody>")
		for _, ord := range o.InFlight {
			w.put("<tr><td><code>%s</code></td><td>%s</td><td>%s <code>%s</code></td><td>%s</td></tr>",
				ord.UUID, ord.Type, ord.ResourceName, ord.ResourceUUID, age(w.now, ord.Since))
		}
		w.put("\n</tbody></table>")
	}
	if len(o.Listeners) > 0 {
		w.put("\n<p class=\"facts\">event listeners: ")
		for _, l := range o.Listeners {
			w.put("<span>%s ", l.ObjectType)
			if l.Connected {
				w.put(badge("ok", "subscribed"))
			} else {
				w.put(badge("error", "disconnected"))
			}
			w.put(` <span class="muted">since %s</span></span>`, relative(w.now, l.Since))
		}
		w.put("</p>")
	}
	w.put("\n</section>\n")
}

// mode is one row of an offering's table of modes.
func (w *pageWriter) mode(m ModeView) {
	w.put("\n<tr data-mode=\"%s\"><td><b>%s</b></td><td>%s</td>\n<td>", m.Mode, m.Mode, seconds(m.PeriodSeconds))
	if m.Running {
		w.put(badge("run", "running"))
		if m.RunningSince != nil {
			w.put(" for %s", age(w.now, *m.RunningSince))
		}
	} else {
		w.put(badge("idle", "idle"))
	}
	w.put("</td>")
	if c := m.Last; c != nil {
		w.put("<td>%s <span class=\"muted\">(%s)</span></td><td>%s</td>\n<td>", short(w.now, c.Finished), relative(w.now, c.Finished), seconds(c.DurationSeconds))
		if c.Result == "ok" {
			w.put(badge("ok", "ok"))
		} else {
			w.put(badge("error", "error")+` <span class="msg">%s</span>`, c.Error)
		}
		w.put("</td>")
	} else {
		w.put(`<td class="muted">none yet</td><td></td><td></td>`)
	}
	w.put("\n<td>")
	switch {
	case m.Running:
		w.put(`<span class="muted">after this one</span>`)
	case m.Next != nil:
		w.put(`%s <span class="muted">(%s)</span>`, short(w.now, *m.Next), relative(w.now, *m.Next))
	default:
		w.put(`<span class="muted">not scheduled</span>`)
	}
	w.put("</td>\n<td>%s (%s)</td></tr>", itoa(m.Cycles), itoa(m.Failures))
}

func (w *pageWriter) degraded(ups []UpstreamView) {
	w.put(`<section id="degraded"><h2>Degraded upstreams</h2>`)
	if len(ups) == 0 {
		w.put("<p class=\"muted\">none: every upstream answered its last call</p>\n</section>\n")
		return
	}
	w.put("\n<table><thead><tr><th>offering</th><th>upstream</th><th>failed calls</th><th>last error</th><th>last success</th><th>what failed</th></tr></thead><tbody>")
	for _, u := range ups {
		w.put("<tr><td>%s</td><td><b>%s</b></td><td>%s of %s calls</td>\n<td>", u.OfferingName, u.Upstream, itoa(u.Errors), itoa(u.Calls))
		if u.LastErrorAt != nil {
			w.put("%s", relative(w.now, *u.LastErrorAt))
		}
		w.put("</td><td>")
		if u.LastOK != nil {
			w.put("%s", relative(w.now, *u.LastOK))
		} else {
			w.put(`<span class="muted">never</span>`)
		}
		w.put(`</td><td class="msg">%s</td></tr>`, u.LastError)
	}
	w.put("\n</tbody></table>\n</section>\n")
}

func (w *pageWriter) errors(s Snapshot) {
	w.put(`<section id="errors"><h2>Last errors <span class="muted">(%s shown, %s since start)</span></h2>`, itoa(len(s.Errors)), itoa(s.ErrorsTotal))
	if len(s.Errors) == 0 {
		w.put("<p class=\"muted\">none</p>\n</section>\n")
		return
	}
	w.put("\n<table><thead><tr><th>when (UTC)</th><th>offering</th><th>where</th><th>message</th></tr></thead><tbody>")
	for _, e := range s.Errors {
		w.put(`<tr><td style="white-space:nowrap">%s <span class="muted">(%s)</span></td><td>%s</td><td>%s</td><td class="msg">%s</td></tr>`,
			short(w.now, e.At), relative(w.now, e.At), e.Offering, e.Source, e.Message)
	}
	w.put("\n</tbody></table>\n</section>\n")
}
