{{/* The chart's name, or nameOverride. */}}
{{- define "video-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The release's full name: the prefix of every object, "video-operator" for a release of that name
(or fullnameOverride).
*/}}
{{- define "video-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "video-operator.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "video-operator.labels" -}}
app.kubernetes.io/name: {{ include "video-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The manager pods' labels, which the Services select (the same as config/default's). */}}
{{- define "video-operator.selectorLabels" -}}
control-plane: controller-manager
app.kubernetes.io/name: {{ include "video-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
The name of the leader-election Lease: leaderElection.id, or <fullname>.video.videoops.io, so that
two releases in one namespace (two groups of tenants, docs/scale-out.md) hold two Leases and both
lead. A release named video-operator keeps the id of earlier charts and of config/default.
*/}}
{{- define "video-operator.leaderElectionID" -}}
{{- .Values.leaderElection.id | default (printf "%s.video.videoops.io" (include "video-operator.fullname" .)) -}}
{{- end -}}

{{/* The manager's ServiceAccount: serviceAccount.name, or <fullname>-controller-manager. */}}
{{- define "video-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.name -}}
{{- .Values.serviceAccount.name -}}
{{- else if .Values.serviceAccount.create -}}
{{ include "video-operator.fullname" . }}-controller-manager
{{- else -}}
{{- fail "serviceAccount.create=false needs serviceAccount.name: the existing ServiceAccount the manager runs as" -}}
{{- end -}}
{{- end -}}

{{/*
watchNamespaces as a list, whether given as a list or as one comma-separated string (the
schema checks each name); empty when all namespaces are managed.
*/}}
{{- define "video-operator.watchNamespaces" -}}
{{- $w := .Values.watchNamespaces -}}
{{- $list := list -}}
{{- if kindIs "slice" $w -}}
{{- $list = $w -}}
{{- else if $w -}}
{{- range splitList "," (toString $w) -}}
{{- if trim . -}}{{- $list = append $list (trim .) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson (uniq $list) -}}
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

{{/*
Values that would render a manifest that installs but breaks: refused at template time with the
value to fix. The manager checks its flags again when it starts.
*/}}
{{- define "video-operator.validate" -}}
{{- /* fail, not required: helm lint reads a missing required value as a notice and passes. */ -}}
{{- if not .Values.service.baseURL -}}
{{- fail "service.baseURL is required: the video service's base URL including /serviceapis, for example --set service.baseURL=https://video.example.com/serviceapis (the manager cannot start without it)" -}}
{{- end -}}
{{- $base := .Values.service.baseURL -}}
{{- $bu := urlParse $base -}}
{{- if and (eq $bu.scheme "http") (not (regexMatch "^(localhost|127\\.[0-9.]+|::1)$" $bu.hostname)) (not .Values.service.allowInsecureURL) (not (has "--allow-insecure-service-url" .Values.extraArgs)) -}}
{{- fail (printf "service.baseURL %q is plain http://: the API key would cross the network in clear text, and the manager refuses to start with it. Use https://, or set service.allowInsecureURL=true for a simulator inside the cluster" $base) -}}
{{- end -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) -}}
{{- fail "replicas > 1 needs leaderElection.enabled=true: without it every replica reconciles and submits" -}}
{{- end -}}
{{- if .Values.callbacks.enabled -}}
{{- if or (not .Values.callbacks.keySecret.name) (not .Values.callbacks.keySecret.key) -}}
{{- fail "callbacks.enabled needs callbacks.keySecret.name and callbacks.keySecret.key: the Secret whose key signs callback URLs (create it first, see values.yaml)" -}}
{{- end -}}
{{- $url := required "callbacks.publicURL is required when callbacks.enabled" .Values.callbacks.publicURL -}}
{{- $u := urlParse $url -}}
{{- if or (not (has $u.scheme (list "http" "https"))) (not $u.host) (not (has $u.path (list "" "/"))) -}}
{{- fail (printf "callbacks.publicURL %q must be a scheme and host without a path, for example https://video-operator.example.com (the manager adds /callbacks/)" $url) -}}
{{- end -}}
{{- if and .Values.callbacks.ingress.enabled (ne $u.hostname .Values.callbacks.ingress.host) -}}
{{- fail (printf "callbacks.publicURL %q does not name callbacks.ingress.host %q: the service would call a host the Ingress does not serve" $url .Values.callbacks.ingress.host) -}}
{{- end -}}
{{- $port := int .Values.callbacks.listenPort -}}
{{- if or (eq $port 8081) (and .Values.metrics.enabled (eq $port (int .Values.metrics.port))) -}}
{{- fail (printf "callbacks.listenPort %d is taken by the health probes (8081) or metrics.port" $port) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.metrics.enabled (eq (int .Values.metrics.port) 8081) -}}
{{- fail "metrics.port 8081 is the health probes' port" -}}
{{- end -}}
{{- $tls := .Values.metrics.serviceMonitor.tls -}}
{{- if and $tls.caSecretName $tls.caConfigMapName -}}
{{- fail "metrics.serviceMonitor.tls: set caSecretName or caConfigMapName, not both" -}}
{{- end -}}
{{- if and (or $tls.caSecretName $tls.caConfigMapName) (not .Values.metrics.certSecret) -}}
{{- fail "metrics.serviceMonitor.tls names a CA, but metrics.certSecret is empty: the manager would serve a self-signed certificate that no CA verifies. Set metrics.certSecret to the kubernetes.io/tls Secret that CA signed" -}}
{{- end -}}
{{- if and .Values.monitoring.prometheusRule.enabled (not .Values.metrics.enabled) -}}
{{- fail "monitoring.prometheusRule.enabled needs metrics.enabled: every alert reads the manager's metrics, and with none served VideoOperatorAbsent would fire 10 minutes after the install and never clear. Set metrics.enabled=true, or leave monitoring.prometheusRule.enabled off" -}}
{{- end -}}
{{- end -}}

{{/*
The pod's terminationGracePeriodSeconds: the manager's shutdown budget (service.timeout + 35s,
controller.ShutdownBudget) plus 10s, so that a paid call in flight and the write of its job id end
before the kubelet kills the pod. 75 for the default 30s, as in config/manager.
*/}}
{{- define "video-operator.terminationGracePeriodSeconds" -}}
{{- $t := toString .Values.service.timeout -}}
{{- if not (regexMatch "^[0-9]+(s|m)$" $t) -}}
{{- fail (printf "service.timeout %q must be whole seconds or minutes, for example 30s or 2m" $t) -}}
{{- end -}}
{{- $n := int (regexFind "^[0-9]+" $t) -}}
{{- if hasSuffix "m" $t -}}{{- $n = mul $n 60 -}}{{- end -}}
{{- if lt $n 1 -}}
{{- fail "service.timeout must be positive" -}}
{{- end -}}
{{- add $n 45 -}}
{{- end -}}

{{/*
The uninstall hook Job's activeDeadlineSeconds: it waits out the manager's graceful shutdown (a
paid call in flight, terminationGracePeriodSeconds, which follows service.timeout), then a lease
expiry and the settling itself. uninstall.timeoutSeconds (300) fits the default service.timeout
(a grace period of 75s) with 225s to spare; a longer service.timeout lengthens the deadline by as
much, so the hook never gives up on a manager that is still allowed to finish.
*/}}
{{- define "video-operator.uninstallDeadlineSeconds" -}}
{{- $grace := int (include "video-operator.terminationGracePeriodSeconds" .) -}}
{{- max (int .Values.uninstall.timeoutSeconds) (add $grace 225) -}}
{{- end -}}

{{/*
The manager image: repository@digest when image.digest is set (a released chart pins the image it
was built with), else repository:tag, the tag defaulting to the chart's appVersion.
*/}}
{{- define "video-operator.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}
