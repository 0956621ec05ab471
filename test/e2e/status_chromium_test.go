package e2e

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/telemetry"
	"github.com/waldur/site-agent/internal/testenv"
)

// chromiumFlags make Debian's Chromium run headless here: no sandbox (root in a container), no
// GPU, and none of its background connections to Google's hosts (refused on a closed network).
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"}

// needChromium finds Debian's chromium (SITE_AGENT_CHROMIUM or the PATH) in the real-server
// tier; scripts/test-real.sh installs it.
func needChromium(t *testing.T) string {
	t.Helper()
	if err := testenv.Gate(); err != nil {
		t.Skip(err)
	}
	path := os.Getenv("SITE_AGENT_CHROMIUM")
	if path == "" {
		path, _ = exec.LookPath("chromium")
	}
	if path == "" {
		if os.Getenv(testenv.EnvRequireReal) == "1" {
			t.Fatal("chromium not found (apt-get install chromium, or set SITE_AGENT_CHROMIUM)")
		}
		t.Skip("chromium not found (apt-get install chromium, or set SITE_AGENT_CHROMIUM)")
	}
	return path
}

// chromium runs Chromium with a fresh profile and returns its standard output.
func chromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	all := append(append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir()), args...)
	cmd := exec.CommandContext(ctx, bin, all...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, tail(errb.String()))
	}
	return out.Bytes()
}

// Debian's Chromium renders /status of the built binary (every mode of two offerings, orders in
// flight, Waldur failing usage reports): the screenshot is a real page, not a blank one, and
// the DOM Chromium builds shows every offering with each of its modes.
func TestRealChromiumRendersTheStatusPage(t *testing.T) {
	bin := needChromium(t)
	e := newOperatorEnv(t, "8s") // orders stay in flight while Chromium starts
	waitFor(t, 20*time.Second, "failed report cycles and Waldur degraded", func() bool {
		s := e.snapshot(t)
		return len(s.Degraded) > 0 && len(s.Errors) > 0
	})
	e.waitInFlight(t)
	shot := filepath.Join(t.TempDir(), "status.png")
	start := time.Now()
	chromium(t, bin, "--window-size=1280,900", "--screenshot="+shot, e.base+"/status")
	t.Logf("screenshot in %s", time.Since(start).Round(time.Millisecond))
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("SITE_AGENT_SCREENSHOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "status.png"), data, 0o644)
	}
	checkScreenshot(t, data)

	dom := string(chromium(t, bin, "--dump-dom", e.base+"/status"))
	want := map[string][]string{
		telemetry.OfferingLabel(e.world.Offering.UUID): {"Cloud Compute", "order_process", "membership_sync", "report"},
		telemetry.OfferingLabel(e.events.UUID):         {"Event Cloud", "event_process", "report"},
	}
	sections := strings.Split(dom, `<section class="offering"`)[1:]
	if len(sections) != len(want) {
		t.Fatalf("the DOM has %d offering sections, want %d:\n%s", len(sections), len(want), dom)
	}
	for _, sec := range sections {
		uuid, _, _ := strings.Cut(strings.TrimPrefix(sec, ` data-uuid="`), `"`)
		w, ok := want[uuid]
		if !ok {
			t.Errorf("an offering section for %q", uuid)
			continue
		}
		if !strings.Contains(sec, "<h2>"+w[0]+" ") {
			t.Errorf("the section of %s does not name it", w[0])
		}
		for _, mode := range w[1:] {
			if !strings.Contains(sec, `<tr data-mode="`+mode+`">`) {
				t.Errorf("the section of %s has no row for %s", w[0], mode)
			}
		}
		delete(want, uuid)
	}
	for _, w := range want {
		t.Errorf("no section for %s", w[0])
	}
	for _, s := range []string{`id="degraded"`, "waldur", `id="errors"`, "503", `id="leader"`} {
		if !strings.Contains(dom, s) {
			t.Errorf("the rendered page lacks %q", s)
		}
	}
}

// checkScreenshot: a 1280×900 PNG with text on it — many colours, and dark pixels (text) and
// light ones (background) in proportions no blank or error page has.
func checkScreenshot(t *testing.T, data []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != 1280 || b.Dy() != 900 {
		t.Fatalf("screenshot %dx%d, want 1280x900", b.Dx(), b.Dy())
	}
	var sum, sumSq float64
	var dark, n int
	colours := map[uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			l := luma(img, x, y)
			sum, sumSq, n = sum+l, sumSq+l*l, n+1
			if l < 100 {
				dark++
			}
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[(r>>11)<<10|(g>>11)<<5|bl>>11] = true
		}
	}
	mean := sum / float64(n)
	variance := sumSq/float64(n) - mean*mean
	t.Logf("screenshot: %d bytes, luma mean %.0f, variance %.0f, %.1f%% dark, %d colours", len(data), mean, variance,
		100*float64(dark)/float64(n), len(colours))
	if len(data) < 20_000 || variance < 300 || dark*100 < n || len(colours) < 16 {
		t.Errorf("the screenshot looks blank or trivial: %d bytes, variance %.0f, %d of %d sampled pixels dark, %d colours",
			len(data), variance, dark, n, len(colours))
	}
}

func luma(img image.Image, x, y int) float64 {
	r, g, b, _ := img.At(x, y).RGBA()
	return (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)) / 257
}
