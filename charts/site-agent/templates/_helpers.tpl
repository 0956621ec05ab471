{{/* Chart name. */}}
{{- define "site-agent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: release-chart, 63 characters at most. */}}
{{- define "site-agent.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "site-agent.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "site-agent.labels" -}}
helm.sh/chart: {{ include "site-agent.chart" . }}
{{ include "site-agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "site-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "site-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The Secret holding config.yaml. */}}
{{- define "site-agent.secretName" -}}
{{- default (include "site-agent.fullname" .) .Values.secret.name }}
{{- end }}

{{/* Whether the chart creates a ServiceAccount (asked for, or needed for the Lease). */}}
{{- define "site-agent.createServiceAccount" -}}
{{- if or .Values.serviceAccount.create .Values.leaderElection.enabled }}true{{ end }}
{{- end }}

{{- define "site-agent.serviceAccountName" -}}
{{- if include "site-agent.createServiceAccount" . }}
{{- default (include "site-agent.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "site-agent.leaseName" -}}
{{- default (include "site-agent.fullname" .) .Values.leaderElection.leaseName }}
{{- end }}

{{- define "site-agent.image" -}}
{{- $repo := .Values.image.repository }}
{{- if .Values.image.registry }}{{ $repo = printf "%s/%s" .Values.image.registry $repo }}{{ end }}
{{- printf "%s:%s" $repo (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* Refuse settings that would let two agents work at once, or name no mode. */}}
{{- define "site-agent.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicaCount > 1 needs leaderElection.enabled=true: without a lease every replica would process the same orders" }}
{{- end }}
{{- if not (has .Values.mode (list "all" "order_process" "membership_sync" "report")) }}
{{- fail (printf "mode must be all, order_process, membership_sync or report, got %q" .Values.mode) }}
{{- end }}
{{- if and (not .Values.secret.create) (not .Values.secret.name) }}
{{- fail "secret.create=false needs secret.name: the existing Secret holding config.yaml" }}
{{- end }}
{{- end }}
