{{/* The name of every object: the release name, cut to DNS length. */}}
{{- define "toolwarden.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "toolwarden.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "toolwarden.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "toolwarden.redisSelector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end -}}

{{/* Whether the chart runs its own Redis. */}}
{{- define "toolwarden.ownRedis" -}}
{{- if and .Values.redis.enabled (not .Values.redis.url) -}}true{{- end -}}
{{- end -}}

{{/* The Redis URL the replicas use, or nothing. */}}
{{- define "toolwarden.redisURL" -}}
{{- if .Values.redis.url -}}
{{- .Values.redis.url -}}
{{- else if .Values.redis.enabled -}}
{{- printf "redis://%s-redis:6379/0" (include "toolwarden.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the Redis password, or nothing. */}}
{{- define "toolwarden.redisSecret" -}}
{{- if .Values.redis.existingSecret -}}
{{- .Values.redis.existingSecret -}}
{{- else if include "toolwarden.ownRedis" . -}}
{{- printf "%s-redis" (include "toolwarden.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "toolwarden.clusterSecret" -}}
{{- default (printf "%s-cluster" (include "toolwarden.fullname" .)) .Values.cluster.existingSecret -}}
{{- end -}}

{{/* The RuntimeClass to run under, or nothing (gvisor.enabled auto|true|false). */}}
{{- define "toolwarden.runtimeClass" -}}
{{- $mode := toString .Values.gvisor.enabled -}}
{{- if eq $mode "true" -}}
{{- .Values.gvisor.runtimeClassName -}}
{{- else if eq $mode "auto" -}}
{{- if lookup "node.k8s.io/v1" "RuntimeClass" "" .Values.gvisor.runtimeClassName -}}
{{- .Values.gvisor.runtimeClassName -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A random value kept across upgrades: the existing Secret's, else new. */}}
{{- define "toolwarden.keepRandom" -}}
{{- $old := lookup "v1" "Secret" .ns .name -}}
{{- if and $old (index $old.data .key) -}}
{{- index $old.data .key -}}
{{- else -}}
{{- randAlphaNum 48 | b64enc -}}
{{- end -}}
{{- end -}}
