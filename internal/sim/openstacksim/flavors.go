package openstacksim

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Nova flavors and key pairs, enough for booting servers.

// Flavor is a Nova flavor.
type Flavor struct {
	ID, Name           string
	VCPUs, RAMMB, Disk int
}

// DefaultFlavors are the flavors a simulator starts with unless Options.Flavors is set.
func DefaultFlavors() []Flavor {
	return []Flavor{
		{ID: "1", Name: "m1.tiny", VCPUs: 1, RAMMB: 512, Disk: 1},
		{ID: "2", Name: "m1.small", VCPUs: 1, RAMMB: 2048, Disk: 20},
		{ID: "3", Name: "m1.medium", VCPUs: 2, RAMMB: 4096, Disk: 40},
		{ID: "4", Name: "m1.large", VCPUs: 4, RAMMB: 8192, Disk: 80},
		{ID: "5", Name: "m1.xlarge", VCPUs: 8, RAMMB: 16384, Disk: 160},
	}
}

func (s *Server) seedFlavors() {
	fl := s.opts.Flavors
	if fl == nil {
		fl = DefaultFlavors()
	}
	for _, f := range fl {
		f := f
		s.st.flavors[f.ID] = &f
	}
}

func (f *Flavor) render(detail bool) map[string]any {
	m := map[string]any{"id": f.ID, "name": f.Name, "links": []any{}}
	if detail {
		m["vcpus"], m["ram"], m["disk"] = f.VCPUs, f.RAMMB, f.Disk
		m["OS-FLV-EXT-DATA:ephemeral"], m["swap"], m["rxtx_factor"] = 0, "", 1.0
		m["os-flavor-access:is_public"], m["OS-FLV-DISABLED:disabled"] = true, false
	}
	return m
}

func (c *call) flavorList(detail bool) {
	out := []map[string]any{}
	for _, f := range c.s.st.flavors {
		out = append(out, f.render(detail))
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	c.reply(http.StatusOK, map[string]any{"flavors": out})
}

func (c *call) listFlavors()       { c.flavorList(false) }
func (c *call) listFlavorsDetail() { c.flavorList(true) }

func (c *call) getFlavor() {
	f := c.s.st.flavors[c.param(0)]
	if f == nil {
		c.fail(http.StatusNotFound, "Flavor "+c.param(0)+" could not be found.")
		return
	}
	c.reply(http.StatusOK, map[string]any{"flavor": f.render(true)})
}

type keypair struct {
	Name, UserID, PublicKey, Fingerprint string
}

func (k *keypair) render() map[string]any {
	return map[string]any{"name": k.Name, "public_key": k.PublicKey, "fingerprint": k.Fingerprint, "type": "ssh", "user_id": k.UserID}
}

func (c *call) listKeypairs() {
	out := []map[string]any{}
	for _, k := range c.s.st.keypairs {
		if k.UserID == c.tok.userID {
			out = append(out, map[string]any{"keypair": k.render()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i]["keypair"].(map[string]any)["name"].(string) < out[j]["keypair"].(map[string]any)["name"].(string)
	})
	c.reply(http.StatusOK, map[string]any{"keypairs": out})
}

func (c *call) createKeypair() {
	m, ok := c.object("keypair", "name", "public_key", "type")
	if !ok {
		return
	}
	k := &keypair{UserID: c.tok.userID}
	var typ string
	if !c.fields(m, map[string]any{"name": &k.Name, "public_key": &k.PublicKey, "type": &typ}) {
		return
	}
	switch {
	case k.Name == "" || len(k.Name) > 255:
		c.fail(http.StatusBadRequest, "Invalid input for field/attribute name.")
		return
	case k.PublicKey == "":
		c.fail(http.StatusBadRequest, "the simulator imports key pairs only (public_key is required)")
		return
	case !strings.HasPrefix(k.PublicKey, "ssh-") && !strings.HasPrefix(k.PublicKey, "ecdsa-"):
		c.fail(http.StatusBadRequest, "Keypair data is invalid: failed to generate fingerprint")
		return
	case typ != "" && typ != "ssh":
		c.fail(http.StatusBadRequest, "the simulator supports ssh key pairs only")
		return
	}
	if c.s.st.keypairs[k.UserID+"/"+k.Name] != nil {
		c.fail(http.StatusConflict, fmt.Sprintf("Key pair '%s' already exists.", k.Name))
		return
	}
	sum := sha256.Sum256([]byte(k.PublicKey))
	k.Fingerprint = fmt.Sprintf("SHA256:%x", sum[:8])
	c.s.st.keypairs[k.UserID+"/"+k.Name] = k
	c.reply(http.StatusOK, map[string]any{"keypair": k.render()})
}

func (c *call) getKeypair() {
	k := c.s.st.keypairs[c.tok.userID+"/"+c.param(0)]
	if k == nil {
		c.fail(http.StatusNotFound, "Keypair "+c.param(0)+" not found for user "+c.tok.userID)
		return
	}
	c.reply(http.StatusOK, map[string]any{"keypair": k.render()})
}

func (c *call) deleteKeypair() {
	key := c.tok.userID + "/" + c.param(0)
	if c.s.st.keypairs[key] == nil {
		c.fail(http.StatusNotFound, "Keypair "+c.param(0)+" not found for user "+c.tok.userID)
		return
	}
	delete(c.s.st.keypairs, key)
	c.noContent(http.StatusAccepted)
}
