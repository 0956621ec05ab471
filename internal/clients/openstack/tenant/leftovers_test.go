package tenant

import "testing"

func TestInventoryMessages(t *testing.T) {
	inv := Inventory{Kinds: ProjectKinds(), By: map[string][]Leftover{
		"volume": {{ID: "v2", Name: "data"}, {ID: "v1", Name: ""}},
		"server": {{ID: "s1", Name: "web", Busy: true}},
	}}
	if got, want := inv.String(), "1 server(s) and 2 volume(s)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := inv.Names(), "server web (s1), volume (no name) (v1) and volume data (v2)"; got != want {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if inv.Settled() || inv.Empty() {
		t.Error("a busy server: not settled, not empty")
	}
	rest := inv.Filter(func(kind string, o Leftover) bool { return kind != "server" })
	if !rest.Settled() || rest.String() != "2 volume(s)" {
		t.Errorf("filtered: %q", rest)
	}
	if !(Inventory{Kinds: ProjectKinds()}).Empty() {
		t.Error("no objects: empty")
	}
}
