// Command etcd is etcd's own server (go.etcd.io/etcd/server/v3's etcdmain, the version go.mod
// pins), built by scripts/etcd/build.sh for the virtual-clusters benchmark's main API server.
// It is a module of its own so that the product module never depends on etcd's server; nothing
// here is imported by the product.
//
// Why not the distribution's etcd: the kube-apiserver serves consistent LISTs from its watch
// cache only with an etcd that answers progress requests correctly (3.4.31+, 3.5.13+); with an
// older one (Debian's 3.4.23) every LIST without a resourceVersion is read from etcd and
// decoded whole — KWOK lists each new Node's Pods so, which at 1,000 clusters reads every Pod of
// every cluster thousands of times.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
