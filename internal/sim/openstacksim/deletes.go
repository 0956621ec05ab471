package openstacksim

// SetAsyncDeletes makes deletions of servers, volumes, snapshots, backups and load balancers
// behave like the real services under load: the request is accepted, the object stays listed
// in its deleting state (and keeps counting against quotas) until CompleteDeletes.
func (s *Server) SetAsyncDeletes(on bool) {
	s.mu.Lock()
	s.asyncDeletes = on
	s.mu.Unlock()
}

// CompleteDeletes finishes every deletion in progress.
func (s *Server) CompleteDeletes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	for id, v := range st.servers {
		if v.deleting {
			st.removeServer(id)
		}
	}
	for id, v := range st.volumes {
		if v.deleting {
			delete(st.volumes, id)
		}
	}
	for id, v := range st.snapshots {
		if v.deleting {
			delete(st.snapshots, id)
		}
	}
	for id, v := range st.backups {
		if v.deleting {
			delete(st.backups, id)
		}
	}
	for id, v := range st.lbs {
		if v.deleting {
			delete(st.lbs, id)
		}
	}
}
