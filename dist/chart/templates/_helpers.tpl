{{/* The release's full name: the prefix of every object, "video-operator" for a release of that name. */}}
{{- define "video-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "video-operator.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The manager pods' labels, which the Services select (the same as config/default's). */}}
{{- define "video-operator.selectorLabels" -}}
control-plane: controller-manager
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "video-operator.serviceAccountName" -}}
{{ include "video-operator.fullname" . }}-controller-manager
{{- end -}}

{{/*
The rules of a role from a copy of config/rbac/<file> in files/rbac/, which `make manifests`
refreshes (hack/helm-chart.sh): the chart's RBAC cannot drift from the generated role.
*/}}
{{- define "video-operator.rules" -}}
{{- $doc := fromYaml (.ctx.Files.Get (printf "files/rbac/%s" .file)) -}}
{{- if not $doc.rules -}}
{{- fail (printf "files/rbac/%s has no rules: run make manifests" .file) -}}
{{- end -}}
rules:
{{ toYaml $doc.rules }}
{{- end -}}
