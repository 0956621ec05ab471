package rke2

import (
	"regexp"
	"sync"
)

// lazyRegexp is a pattern compiled on first use: a package-level regexp.MustCompile runs at
// start-up in every agent, whether or not it has an rke2 offering (issue 20 item 7).
type lazyRegexp struct {
	pattern string
	once    sync.Once
	re      *regexp.Regexp
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pattern) })
	return l.re
}
