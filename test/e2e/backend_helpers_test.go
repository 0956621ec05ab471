package e2e

import (
	"context"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
)

func addByHand(b *inmemory.Backend, id, username string) error {
	return b.AddMembers(context.Background(), backends.Resource{BackendID: id}, []backends.Member{{Username: username}})
}

func createByHand(b *inmemory.Backend, id, resourceUUID string) error {
	_, err := b.Create(context.Background(), backends.CreateRequest{Name: id, Resource: backends.Resource{UUID: resourceUUID}})
	return err
}
