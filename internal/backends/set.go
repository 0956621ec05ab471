package backends

// Set holds the roles one backend plays, found once by type assertion. Modes use the Set rather
// than asserting themselves, so decorators (metrics, dry run) can wrap each role without hiding
// any. A nil field means the backend does not play that role.
type Set struct {
	Name string // the configured backend name

	Provisioner Provisioner
	Members     MembershipManager
	Projects    ProjectSyncer
	Usage       UsageReporter
	Pinger      Pinger
	Diagnoser   Diagnoser
	Reconciler  Reconciler
	Status      StatusController
	Limits      LimitsReader
	Metadata    MetadataReader
	Evaluator   OrderEvaluator
	Closer      Closer
	// UsageIsGauge: reported usage can legitimately decrease (see GaugeUsage).
	UsageIsGauge bool
}

// RolesOf collects the roles b implements.
func RolesOf(name string, b Backend) Set {
	s := Set{Name: name}
	s.Provisioner, _ = b.(Provisioner)
	s.Members, _ = b.(MembershipManager)
	s.Projects, _ = b.(ProjectSyncer)
	s.Usage, _ = b.(UsageReporter)
	s.Pinger, _ = b.(Pinger)
	s.Diagnoser, _ = b.(Diagnoser)
	s.Reconciler, _ = b.(Reconciler)
	s.Status, _ = b.(StatusController)
	s.Limits, _ = b.(LimitsReader)
	s.Metadata, _ = b.(MetadataReader)
	s.Evaluator, _ = b.(OrderEvaluator)
	s.Closer, _ = b.(Closer)
	if g, ok := b.(GaugeUsage); ok {
		s.UsageIsGauge = g.UsageIsGauge()
	}
	return s
}
