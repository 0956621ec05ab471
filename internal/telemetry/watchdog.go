package telemetry

import (
	"context"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"go.uber.org/zap"
)

// FeedWatchdog feeds systemd's service watchdog (WatchdogSec=) from a goroutine of its own
// while live — the liveness judgement /healthz answers with — reports the process healthy:
// WATCHDOG=1 on $NOTIFY_SOCKET at half of $WATCHDOG_USEC. While live fails nothing is sent,
// so a wedged agent is restarted by systemd once WatchdogSec passes without a feed. It does
// nothing when the watchdog is off, or when $WATCHDOG_PID names another process. It stops
// when ctx is cancelled.
func FeedWatchdog(ctx context.Context, live func() error, log *zap.Logger) {
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		log.Warn("systemd watchdog settings not understood; not feeding it", zap.Error(err))
		return
	}
	if interval <= 0 {
		return
	}
	log.Info("feeding the systemd watchdog while live", zap.Duration("timeout", interval))
	go feedWatchdog(ctx, interval/2, live, log)
}

func feedWatchdog(ctx context.Context, every time.Duration, live func() error, log *zap.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	feeding := true
	for {
		err := live()
		switch {
		case err == nil:
			if !feeding {
				log.Info("live again; feeding the systemd watchdog")
			}
			if _, nerr := daemon.SdNotify(false, daemon.SdNotifyWatchdog); nerr != nil {
				log.Warn("cannot notify systemd", zap.Error(nerr))
			}
		case feeding:
			log.Error("not live; no longer feeding the systemd watchdog, which will restart the agent", zap.Error(err))
		}
		feeding = err == nil
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
