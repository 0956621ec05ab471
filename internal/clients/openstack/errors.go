package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/waldur/site-agent/internal/failure"
)

// Classify turns a gophercloud error into the agent's error kinds: HTTP statuses become
// failure.StatusError (transient for 5xx and 429; 404 also wraps failure.ErrNotFound),
// network failures are transient, context errors pass through. svc names the upstream in
// messages.
func Classify(svc string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *failure.Error
	if errors.As(err, &pe) || failure.IsTransient(err) && hasStatus(err) {
		return err
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		path := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			path = u.Path
		}
		se := failure.StatusErr(svc, ue.Method, path, ue.Actual, ue.Body)
		if ue.Actual == http.StatusNotFound {
			return fmt.Errorf("%w: %w", se, failure.ErrNotFound)
		}
		return se
	}
	if failure.IsTransient(err) {
		return failure.Transient(err)
	}
	return err
}

func hasStatus(err error) bool {
	var se *failure.StatusError
	return errors.As(err, &se)
}

// IsNotFound reports a 404 from gophercloud or an error wrapping failure.ErrNotFound.
func IsNotFound(err error) bool {
	return gophercloud.ResponseCodeIs(err, http.StatusNotFound) || errors.Is(err, failure.ErrNotFound)
}
