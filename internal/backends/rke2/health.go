package rke2

import "fmt"

// Health is a node's condition as the planner sees it, from Nova and Rancher together.
type Health uint8

// Healths.
const (
	// Pending: the VM is building, or Rancher shows the node registering, unavailable or not
	// at all yet (keep waiting).
	Pending Health = iota
	// Ready: the VM is ACTIVE and Rancher says active.
	Ready
	// Failed: Rancher reports any other state, or the VM is stopped, paused, shelved…; the
	// planner does not touch it and reports it.
	Failed
	// Broken: the VM is in Nova ERROR; it is deleted and replaced.
	Broken
	// Gone: there is no VM (deleted, or never made) but Rancher still lists the node.
	Gone
)

func (h Health) String() string {
	return [...]string{"pending", "ready", "failed", "broken", "gone"}[h]
}

// Node is one observed node: its inventory plus what Nova and Rancher report.
type Node struct {
	Name string
	Inventory
	// VM is the Nova server status (ACTIVE, BUILD, ERROR, SHUTOFF, …); "" when there is no
	// server (only a Rancher node is left).
	VM string
	// Rancher is the Rancher node's state (active, registering, unavailable, error, …); ""
	// when Rancher does not list the node (yet).
	Rancher string
	// Unregistered: the VM has been up longer than the registration timeout and Rancher still
	// does not list the node — its bootstrap failed, so it is replaced like a VM in ERROR.
	Unregistered bool
	// Damaged says what an ACTIVE VM has lost that cannot be mended in place (its port, a
	// volume; shape.go): it is replaced like a VM in ERROR.
	Damaged string
}

// HealthOf classifies a node (seed 000 state mapping: active → ready; registering, unavailable
// or empty → wait; anything else → failed; plus Nova's view).
func HealthOf(n *Node) Health {
	switch n.VM {
	case "", "DELETED", "SOFT_DELETED":
		return Gone
	case "ERROR":
		return Broken
	case "BUILD", "REBUILD", "REBOOT", "HARD_REBOOT", "MIGRATING", "RESIZE", "VERIFY_RESIZE", "PASSWORD":
		return Pending
	case "ACTIVE":
		if n.Damaged != "" || n.Rancher == "" && n.Unregistered {
			return Broken
		}
		return RancherHealth(n.Rancher)
	}
	return Failed
}

// RancherHealth maps a Rancher node state alone.
func RancherHealth(state string) Health {
	switch state {
	case "active":
		return Ready
	case "", "registering", "unavailable":
		return Pending
	}
	return Failed
}

// describe says why a node is not ready, for wait and refusal messages.
func describe(n *Node) string {
	switch h := HealthOf(n); h {
	case Failed:
		if n.VM != "ACTIVE" {
			return fmt.Sprintf("%s (VM %s)", n.Name, n.VM)
		}
		return fmt.Sprintf("%s (Rancher state %q)", n.Name, n.Rancher)
	case Pending:
		if n.VM != "ACTIVE" {
			return fmt.Sprintf("%s (VM %s)", n.Name, n.VM)
		}
		if n.Rancher == "" {
			return n.Name + " (not registered yet)"
		}
		return fmt.Sprintf("%s (%s)", n.Name, n.Rancher)
	default:
		return fmt.Sprintf("%s (%s)", n.Name, h)
	}
}
