// Package kubeapi reaches the Kubernetes API through client-go's REST client with a scheme that
// holds only the API groups a caller names, and typed resources with the calls and signatures of
// client-go's generated clients (Get, List, Create, Update, Patch, Delete); CoreV1 names the
// core/v1 resources its users share.
//
// Why not the generated clientset (k8s.io/client-go/kubernetes): it links the typed clients,
// apply configurations and scheme registrations of every API group, and registers them all in
// package initialisers at every start. Measured on the release binary that was about 10 MB of
// binary, 1.3 MB of start-up allocations and 7 MiB of idle resident memory, for a handful of
// resources in three groups. A Group's scheme is built at its first call, so an agent that
// never reaches Kubernetes never pays for it.
//
// It must not import the generated clientset, informers or tools/leaderelection (the release
// binary's dependency test forbids them).
package kubeapi
