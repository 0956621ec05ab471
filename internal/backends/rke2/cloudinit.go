package rke2

// placeholder replaced below
type CloudInit struct{}

func loadCloudInit(string) (*CloudInit, error) { return &CloudInit{}, nil }
