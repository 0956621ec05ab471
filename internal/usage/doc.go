// Package usage holds the pure arithmetic of the agent: converting limits and usage between
// Waldur units and backend units, billing periods, rounding, and the comparison that decides
// whether a usage report would change anything. No I/O.
package usage
