package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// readyTimeout bounds each wait of a start.
const readyTimeout = 90 * time.Second

func (cp *ControlPlane) waitReady(ctx context.Context) error {
	return cp.poll(ctx, "main API server /readyz", 100*time.Millisecond, "/readyz")
}

// waitDefaultServiceAccount waits for the serviceaccount controller's "default" ServiceAccount
// of the default namespace: the controller manager is connected and working.
func (cp *ControlPlane) waitDefaultServiceAccount(ctx context.Context) error {
	return cp.poll(ctx, `the "default" ServiceAccount`, 100*time.Millisecond, "/api/v1/namespaces/default/serviceaccounts/default")
}

// poll GETs path as the admin every interval until it answers 200, a process exits (its log's
// end is in the error), or readyTimeout passes.
func (cp *ControlPlane) poll(ctx context.Context, what string, interval time.Duration, path string) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cp.CAPEM)
	client := &http.Client{Timeout: 2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cp.Host+path, nil)
		req.Header.Set("Authorization", "Bearer "+cp.Token)
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		last = err
		if err := cp.Exited(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last answer: %v)", what, ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

// Exited says which process ended, with the end of its log (nil while all run).
func (cp *ControlPlane) Exited() error {
	for _, p := range cp.procs {
		if err := p.Exited(); err != nil {
			return fmt.Errorf("%w; the end of %s:\n%s", err, p.LogPath, TailFile(p.LogPath, 15))
		}
	}
	return nil
}
