package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/secret"
)

const (
	uuidA = "E2EF0000-0000-0000-0000-00000000000A"
	uuidB = "e2ef000000000000000000000000000b"
)

// clocked is a recorder on a clock the test moves.
func clocked() (*Status, *time.Time) {
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	s := NewStatusClock("1.2.3", func() time.Time { return now })
	return s, &now
}

func TestStatusRecordsCyclesOrdersAndUpstreams(t *testing.T) {
	s, now := clocked()
	if !s.Declare("order_process", 5*time.Minute, uuidA, "HPC") || !s.Declare("report", 30*time.Minute, uuidA, "HPC") {
		t.Fatal("a first declaration is not first")
	}
	s.Declare("order_process", time.Minute, uuidB, "Cloud")
	if s.Declare("order_process", 5*time.Minute, strings.ToLower(strings.ReplaceAll(uuidA, "-", "")), "HPC renamed") {
		t.Fatal("declaring again (a reload, the UUID written another way) counts as first")
	}
	start := *now
	s.CycleStarted("order_process", uuidA)
	if m := s.Snapshot().Offerings[0].Modes[0]; !m.Running || !m.RunningSince.Equal(start) {
		t.Fatalf("running cycle: %+v", m)
	}
	*now = now.Add(2 * time.Second)
	s.CycleFinished("order_process", uuidA, start, 2*time.Second, errors.New("list orders: 502"))
	s.NextCycle("order_process", now.Add(5*time.Minute))
	s.OrdersPending(uuidA, 3)
	s.OrderStarted(uuidA, OrderView{UUID: "o2", Type: "Create", ResourceName: "r2"})
	s.OrderStarted(uuidA, OrderView{UUID: "o1", Type: "Terminate"})
	s.OrderStarted(uuidA, OrderView{UUID: "o3", Type: "Update"})
	s.OrderEnded(uuidA, "o3")
	s.Upstream(uuidA, "waldur", false, "")
	s.Upstream(uuidA, "waldur", true, "GET /api/marketplace-orders/: no answer")
	s.Upstream(uuidA, "rancher", true, "create: 503")
	s.Upstream(uuidA, "rancher", false, "")
	s.Upstream(uuidA, "access", true, "keycloak down")
	s.Recovered(uuidA, "access")
	s.Recovered(uuidA, "never-seen")
	s.Listener(uuidA, "order", false)
	s.Listener(uuidA, "order", true)

	snap := s.Snapshot()
	if len(snap.Offerings) != 2 || snap.Offerings[0].Name != "HPC renamed" || snap.Offerings[0].UUID != "e2ef000000000000000000000000000a" {
		t.Fatalf("offerings %+v", snap.Offerings)
	}
	a := snap.Offerings[0]
	m := a.Modes[0]
	if m.Running || m.Last == nil || m.Last.Result != "error" || m.Last.Error != "list orders: 502" || m.Last.DurationSeconds != 2 ||
		m.Cycles != 1 || m.Failures != 1 || !m.Next.Equal(now.Add(5*time.Minute)) || a.Modes[1].Mode != "report" || a.Modes[1].Last != nil {
		t.Fatalf("modes %+v, last %+v", a.Modes, m.Last)
	}
	if a.Pending != 3 || len(a.InFlight) != 2 || a.InFlight[0].UUID != "o1" || a.InFlight[1].ResourceName != "r2" {
		t.Fatalf("orders: pending %d, in flight %+v", a.Pending, a.InFlight)
	}
	checkUpstreams(t, snap)
	if len(a.Listeners) != 1 || !a.Listeners[0].Connected {
		t.Fatalf("listeners %+v", a.Listeners)
	}
	if forgotten := s.Retain([]string{uuidA}); len(forgotten) != 1 || forgotten[0] != uuidB {
		t.Fatalf("forgotten %v", forgotten)
	}
	if n := len(s.Snapshot().Offerings); n != 1 {
		t.Fatalf("%d offerings after Retain", n)
	}
}

// checkUpstreams: calls and failures per upstream; only Waldur, whose last call failed, is
// degraded (rancher recovered, the access need was restored).
func checkUpstreams(t *testing.T, snap Snapshot) {
	t.Helper()
	want := map[string][2]int{"waldur": {2, 1}, "rancher": {2, 1}, "access": {1, 1}}
	for _, u := range snap.Offerings[0].Upstreams {
		if w := want[u.Upstream]; u.Calls != w[0] || u.Errors != w[1] {
			t.Errorf("%s: %d calls, %d errors, want %v", u.Upstream, u.Calls, u.Errors, w)
		}
	}
	if len(snap.Degraded) != 1 || snap.Degraded[0].Upstream != "waldur" || snap.Degraded[0].OfferingName != "HPC renamed" ||
		!strings.Contains(snap.Degraded[0].LastError, "no answer") {
		t.Fatalf("degraded %+v", snap.Degraded)
	}
}

// The ring keeps the last errors, newest first; every text is scrubbed of secrets and bounded.
func TestStatusErrorsAreBoundedAndScrubbed(t *testing.T) {
	s, now := clocked()
	s.Declare("membership_sync", time.Minute, uuidA, "HPC")
	token := secret.New("tok-s3cr3t-9f8e7d6c")
	defer token.Forget()
	for i := range maxErrors + 7 {
		*now = now.Add(time.Second)
		s.Error(uuidA, "membership_sync", fmt.Sprintf("error %d: upstream said Bearer %s", i, token.Reveal()))
	}
	s.Reloaded(errors.New("offerings[0].waldur_api_token: bad " + token.Reveal()))
	s.Upstream(uuidA, "waldur", true, strings.Repeat("x", 2*maxText)+token.Reveal())
	snap := s.Snapshot()
	if len(snap.Errors) != maxErrors || snap.ErrorsTotal != maxErrors+8 {
		t.Fatalf("%d errors kept, %d total", len(snap.Errors), snap.ErrorsTotal)
	}
	if snap.Errors[0].Source != "reload" || !strings.HasPrefix(snap.Errors[1].Message, fmt.Sprintf("error %d:", maxErrors+6)) ||
		snap.Errors[1].Offering != "HPC" || !snap.Errors[1].At.After(snap.Errors[2].At) {
		t.Fatalf("not newest first: %+v", snap.Errors[:3])
	}
	if snap.Reloads.Failed != 1 || snap.Reloads.OK {
		t.Fatalf("reloads %+v", snap.Reloads)
	}
	if r := []rune(snap.Degraded[0].LastError); len(r) != maxText+1 {
		t.Fatalf("an upstream error of %d characters kept", len(r))
	}
	data, _ := json.Marshal(snap)
	if strings.Contains(string(data), token.Reveal()) || !strings.Contains(string(data), secret.Redacted) {
		t.Fatal("the status holds a secret")
	}
	page := get(t, StatusHTML(s))
	if strings.Contains(page, token.Reveal()) {
		t.Fatal("the status page shows a secret")
	}
}

func TestNilStatusRecordsNothing(t *testing.T) {
	var s *Status
	s.Declare("report", time.Minute, uuidA, "x")
	s.CycleStarted("report", uuidA)
	s.CycleFinished("report", uuidA, time.Now(), time.Second, nil)
	s.Upstream(uuidA, "waldur", true, "x")
	s.Error(uuidA, "report", "x")
	s.Reloaded(nil)
	if snap := s.Snapshot(); len(snap.Offerings) != 0 || len(snap.Errors) != 0 {
		t.Fatalf("%+v", snap)
	}
}

func get(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	return string(body)
}

func TestStatusPageAndJSON(t *testing.T) {
	s, now := clocked()
	s.Declare("order_process", 5*time.Minute, uuidA, `HPC <script>alert(1)</script>`)
	s.Declare("membership_sync", 5*time.Minute, uuidA, `HPC <script>alert(1)</script>`)
	s.Declare("report", 30*time.Minute, uuidB, "Cloud")
	start := *now
	*now = now.Add(1500 * time.Millisecond)
	s.CycleFinished("order_process", uuidA, start, 1500*time.Millisecond, nil)
	s.NextCycle("order_process", now.Add(5*time.Minute))
	s.CycleStarted("membership_sync", uuidA)
	s.OrderStarted(uuidA, OrderView{UUID: "0rd3r", Type: "Create", ResourceUUID: "r35", ResourceName: "lab"})
	s.Upstream(uuidB, "openstack", true, "keystone: no answer")
	s.Error(uuidB, "report", "usage of 2 tenant(s) not read")
	acquired := now.Add(-time.Hour)
	s.SetLeader(func() Leader {
		return Leader{Election: true, Leading: false, Identity: "pod-b", Holder: "pod-a", Acquired: &acquired}
	})
	*now = now.Add(10 * time.Second)
	page := get(t, StatusHTML(s))
	for _, want := range []string{
		`data-uuid="e2ef000000000000000000000000000a"`, `HPC &lt;script&gt;alert(1)&lt;/script&gt;`, `data-mode="order_process"`,
		`data-mode="membership_sync"`, `data-mode="report"`, "<h2>Cloud", "1.5s", "in 4m50s", "(10s ago)", "(11.5s ago)", `class="badge run">running`,
		"0rd3r", "lab", "keystone: no answer", "usage of 2 tenant(s) not read", "<b>standby</b>", "pod-a", "(1h0m10s ago)",
		`<meta http-equiv="refresh" content="10">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Error("an offering name is not escaped")
	}
	var snap Snapshot
	if err := json.Unmarshal([]byte(get(t, StatusJSON(s))), &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Offerings) != 2 || snap.Offerings[0].Modes[0].Last.Result != "ok" || snap.Leader.Holder != "pod-a" ||
		len(snap.Degraded) != 1 || snap.Offerings[0].InFlight[0].UUID != "0rd3r" {
		t.Fatalf("json %+v", snap)
	}
}

// Recording goes on while pages are served (run with -race).
func TestStatusConcurrentUse(t *testing.T) {
	s := NewStatus("v")
	s.Declare("order_process", time.Minute, uuidA, "HPC")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				id := fmt.Sprintf("o%d-%d", i, j)
				s.OrderStarted(uuidA, OrderView{UUID: id})
				s.CycleStarted("order_process", uuidA)
				s.Upstream(uuidA, "waldur", j%3 == 0, "x")
				s.CycleFinished("order_process", uuidA, time.Now(), time.Millisecond, nil)
				s.OrderEnded(uuidA, id)
				s.Error(uuidA, "order", "x")
			}
		}()
	}
	for range 20 {
		_ = get(t, StatusHTML(s))
	}
	wg.Wait()
	if snap := s.Snapshot(); len(snap.Offerings[0].InFlight) != 0 || snap.Offerings[0].Modes[0].Cycles != 800 {
		t.Fatalf("%+v", snap.Offerings[0])
	}
}

// Names, messages and identities come from Waldur, upstreams and the Lease: whatever they hold,
// the page's markup is its own (only the page's tags, no attribute opened by a value) and the
// values show as text.
func TestStatusPageEscapesHostileValues(t *testing.T) {
	s, now := clocked()
	hostile := `"><script>alert(1)</script><img src=x onerror='alert(2)'> & a+b`
	s.Declare("order_process", time.Minute, uuidA, hostile)
	s.CycleFinished("order_process", uuidA, *now, time.Second, errors.New("upstream said "+hostile))
	s.OrderStarted(uuidA, OrderView{UUID: `o"1`, Type: "<b>Create</b>", ResourceUUID: `r' x='y`, ResourceName: hostile})
	s.Upstream(uuidA, "waldur", true, hostile)
	s.Listener(uuidA, `order"><i>`, true)
	s.Error(uuidA, "<order>", hostile)
	s.SetLeader(func() Leader { return Leader{Election: true, Identity: hostile, Holder: `</code><script>`} })
	page := get(t, StatusHTML(s))
	allowed := map[string]bool{"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true, "header": true,
		"h1": true, "h2": true, "span": true, "a": true, "main": true, "section": true, "p": true, "b": true, "code": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true}
	for _, m := range regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)`).FindAllStringSubmatch(page, -1) {
		if !allowed[strings.ToLower(m[2])] {
			t.Errorf("the page holds a <%s%s> tag", m[1], m[2])
		}
	}
	for _, bad := range []string{`"><script`, `onerror='`, ` x='y`, `<script`, `<img`} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	escaped := `&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&#39;alert(2)&#39;&gt; &amp; a+b`
	if n := strings.Count(page, escaped); n < 6 { // name ×2 (section, degraded), error, order, upstream, identity, last errors
		t.Errorf("the hostile text shows escaped %d times, want ≥ 6", n)
	}
	for _, want := range []string{`<code>o&#34;1</code>`, `&lt;b&gt;Create&lt;/b&gt;`, `<code>r&#39; x=&#39;y</code>`, `order&#34;&gt;&lt;i&gt;`,
		`<code>&lt;/code&gt;&lt;script&gt;</code>`, `&lt;order&gt;`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
