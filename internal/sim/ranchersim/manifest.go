package ranchersim

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"text/template"
)

// handleImport serves GET /v3/import/<token>_<clusterId>.yaml without authentication, as
// Rancher does: a wrong token or cluster is 400 "cluster not found or invalid token".
func (s *Server) handleImport(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	file := strings.TrimPrefix(r.URL.Path, "/v3/import/")
	token, cid, ok := strings.Cut(strings.TrimSuffix(file, ".yaml"), "_")
	if !ok || !strings.HasSuffix(file, ".yaml") {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("invalid filename format, expected {token}_{clusterId}.yaml"))
		return
	}
	if s.clusterByToken(token) != cid {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("cluster not found or invalid token"))
		return
	}
	server := baseURL(r)
	sum := sha256.Sum256([]byte(server + "." + token + "."))
	data := manifestData{
		TokenKey: hex.EncodeToString(sum[:])[:10],
		URL:      base64.StdEncoding.EncodeToString([]byte(server)),
		Token:    base64.StdEncoding.EncodeToString([]byte(token)),
		Server:   server,
	}
	if err := importManifest.Execute(w, data); err != nil {
		s.violation("import manifest: %v", err)
	}
}

type manifestData struct {
	TokenKey, URL, Token, Server string
}

// importManifest follows the shape of rancher/rancher pkg/systemtemplate/template.go for an
// imported cluster (trimmed: no pull secrets, tolerations or feature variables).
var importManifest = template.Must(template.New("import").Parse(`
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: proxy-clusterrole-kubeapiserver
rules:
- apiGroups: [""]
  resources:
  - nodes/metrics
  - nodes/proxy
  - nodes/stats
  - nodes/log
  - nodes/spec
  verbs: ["get", "list", "watch", "create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: proxy-role-binding-kubernetes-master
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: proxy-clusterrole-kubeapiserver
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: kube-apiserver
---
apiVersion: v1
kind: Namespace
metadata:
  name: cattle-system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: cattle
  namespace: cattle-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cattle-admin-binding
  namespace: cattle-system
  labels:
    cattle.io/creator: "norman"
subjects:
- kind: ServiceAccount
  name: cattle
  namespace: cattle-system
roleRef:
  kind: ClusterRole
  name: cattle-admin
  apiGroup: rbac.authorization.k8s.io
---
apiVersion: v1
kind: Secret
metadata:
  name: cattle-credentials-{{.TokenKey}}
  namespace: cattle-system
type: Opaque
data:
  url: "{{.URL}}"
  token: "{{.Token}}"
  namespace: ""
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cattle-admin
  labels:
    cattle.io/creator: "norman"
rules:
- apiGroups:
  - '*'
  resources:
  - '*'
  verbs:
  - '*'
- nonResourceURLs:
  - '*'
  verbs:
  - '*'
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cattle-cluster-agent
  namespace: cattle-system
spec:
  selector:
    matchLabels:
      app: cattle-cluster-agent
  template:
    metadata:
      labels:
        app: cattle-cluster-agent
    spec:
      serviceAccountName: cattle
      containers:
        - name: cluster-register
          imagePullPolicy: IfNotPresent
          env:
          - name: CATTLE_SERVER
            value: "{{.Server}}"
          - name: CATTLE_CLUSTER
            value: "true"
          - name: CATTLE_K8S_MANAGED
            value: "true"
          - name: CATTLE_CREDENTIAL_NAME
            value: cattle-credentials-{{.TokenKey}}
          image: rancher/rancher-agent:v2.12.0
          volumeMounts:
          - name: cattle-credentials
            mountPath: /cattle-credentials
            readOnly: true
      volumes:
      - name: cattle-credentials
        secret:
          secretName: cattle-credentials-{{.TokenKey}}
          defaultMode: 320
---
apiVersion: v1
kind: Service
metadata:
  name: cattle-cluster-agent
  namespace: cattle-system
spec:
  ports:
  - port: 80
    targetPort: 80
    protocol: TCP
    name: http
  - port: 443
    targetPort: 444
    protocol: TCP
    name: https-internal
  selector:
    app: cattle-cluster-agent
`))
