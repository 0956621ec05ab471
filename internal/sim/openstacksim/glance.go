package openstacksim

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"
)

// Glance images exist so that terminate has something to clean up or refuse: tests add them
// with AddImage; the API lists images by owner, unprotects and deletes them.

// AddImage puts an image owned by a project with a visibility (private, shared, community,
// public); a protected image cannot be deleted until it is unprotected.
func (s *Server) AddImage(projectID, visibility string, protected bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	im := &image{ID: newID(true), Name: "image-" + newID(false)[:6], Owner: projectID, Visibility: visibility, Protected: protected}
	s.st.images[im.ID] = im
	return im.ID
}

// AddNamedImage puts a public image with a name (what servers boot from).
func (s *Server) AddNamedImage(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	im := &image{ID: newID(true), Name: name, Owner: "", Visibility: "public"}
	s.st.images[im.ID] = im
	return im.ID
}

func (im *image) body() map[string]any {
	now := time.Now().UTC().Format(time.RFC3339)
	return map[string]any{"id": im.ID, "name": im.Name, "owner": im.Owner, "visibility": im.Visibility, "protected": im.Protected,
		"status": "active", "os_hidden": false, "tags": []string{}, "container_format": "bare", "disk_format": "qcow2",
		"min_disk": 0, "min_ram": 0, "size": 1024, "checksum": nil, "created_at": now, "updated_at": now,
		"self": "/v2/images/" + im.ID, "file": "/v2/images/" + im.ID + "/file", "schema": "/v2/schemas/image"}
}

// glanceVersions serves the unauthenticated version document (Glance answers 300).
func (c *call) glanceVersions() {
	self := "http://" + c.r.Host + "/image/v2/"
	c.reply(http.StatusMultipleChoices, map[string]any{"versions": []map[string]any{
		{"id": "v2.16", "status": "CURRENT", "links": []map[string]string{{"rel": "self", "href": self}}},
		{"id": "v2.15", "status": "SUPPORTED", "links": []map[string]string{{"rel": "self", "href": self}}}}})
}

// listImages serves GET /v2/images. Like Glance, without a visibility filter community images
// are left out; "all" lists every visibility.
func (c *call) listImages() {
	vis := c.query("visibility")
	switch vis {
	case "", "all", "public", "private", "shared", "community":
	default:
		c.fail(http.StatusBadRequest, "Invalid visibility value: "+vis)
		return
	}
	owner, name := c.query("owner"), c.query("name")
	out := []map[string]any{}
	for _, im := range c.s.st.images {
		if owner != "" && im.Owner != owner || name != "" && im.Name != name || vis == "" && im.Visibility == "community" || vis != "" && vis != "all" && im.Visibility != vis {
			continue
		}
		out = append(out, im.body())
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	c.reply(http.StatusOK, map[string]any{"images": out, "first": "/v2/images", "schema": "/v2/schemas/images"})
}

func (c *call) deleteImage() {
	im := c.s.st.images[c.param(0)]
	switch {
	case im == nil:
		c.fail(http.StatusNotFound, "No image found with ID "+c.param(0))
	case im.Protected:
		c.fail(http.StatusForbidden, "Image "+im.ID+" is protected and cannot be deleted.")
	default:
		delete(c.s.st.images, im.ID)
		c.noContent(http.StatusNoContent)
	}
}

// patchImage serves PATCH /v2/images/{id} with a JSON patch; the simulator supports replacing
// "protected" only.
func (c *call) patchImage() {
	if ct := c.r.Header.Get("Content-Type"); ct != "application/openstack-images-v2.1-json-patch" {
		c.fail(http.StatusUnsupportedMediaType, "Unsupported Content-Type "+ct)
		return
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(c.body, &ops); err != nil {
		c.fail(http.StatusBadRequest, "malformed JSON patch: "+err.Error())
		return
	}
	im := c.s.st.images[c.param(0)]
	if im == nil {
		c.fail(http.StatusNotFound, "No image found with ID "+c.param(0))
		return
	}
	for _, op := range ops {
		var v bool
		if op.Op != "replace" || op.Path != "/protected" || json.Unmarshal(op.Value, &v) != nil {
			c.fail(http.StatusBadRequest, "the simulator supports replacing /protected with a boolean only")
			return
		}
		im.Protected = v
	}
	c.reply(http.StatusOK, im.body())
}
