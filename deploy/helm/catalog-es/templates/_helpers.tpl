{{/* Names, labels and the pod parts every catalog-es workload shares. */}}

{{- define "catalog-es.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "catalog-es.fullname" -}}
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

{{- define "catalog-es.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels of one component (api, relay, projector, migration): pass (dict "root" $ "component" "api"). */}}
{{- define "catalog-es.selectorLabels" -}}
app.kubernetes.io/name: {{ include "catalog-es.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "catalog-es.labels" -}}
helm.sh/chart: {{ include "catalog-es.chart" .root }}
{{ include "catalog-es.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: catalog-es
{{- end }}

{{- define "catalog-es.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The maintenance runner's image: catalog-es with PySpark and a JRE (the Dockerfile's spark-client target). */}}
{{- define "catalog-es.maintenanceImage" -}}
{{- printf "%s:%s" .Values.maintenance.image.repository (default .Chart.AppVersion .Values.maintenance.image.tag) }}
{{- end }}

{{/* Liveness of a process without an HTTP API: its `--health-port` listener answers while its loop runs. */}}
{{- define "catalog-es.healthProbes" -}}
startupProbe:
  httpGet:
    path: /health
    port: health
  periodSeconds: 2
  failureThreshold: 90
livenessProbe:
  httpGet:
    path: /health
    port: health
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 6
{{- end }}

{{- define "catalog-es.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "catalog-es.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding CATALOG_ES__PG_DSN and CATALOG_ES__SECRETS_KEY: the operator's, or the chart's. */}}
{{- define "catalog-es.secretName" -}}
{{- default (include "catalog-es.fullname" .) .Values.secret.existingSecret }}
{{- end }}

{{/* Refuse to render a release that could not start: no database, or a malformed secrets key. */}}
{{- define "catalog-es.validate" -}}
{{- if not .Values.secret.existingSecret }}
{{- $_ := required "secret.pgDsn is required (the external PostgreSQL), or name secret.existingSecret" .Values.secret.pgDsn }}
{{- $key := required "secret.secretsKey is required (URL-safe base64 of 32 bytes), or name secret.existingSecret" .Values.secret.secretsKey }}
{{- if not (regexMatch "^[A-Za-z0-9_-]{43}=?$" $key) }}
{{- fail "secret.secretsKey must be URL-safe base64 of 32 bytes (43 characters and an optional '=')" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Settings every process reads: the ConfigMap and the Secret, as environment variables. */}}
{{- define "catalog-es.envFrom" -}}
- configMapRef:
    name: {{ include "catalog-es.fullname" . }}
- secretRef:
    name: {{ include "catalog-es.secretName" . }}
{{- end }}

{{/* Pod settings of every workload. The hook Job leaves out the service account, which a pre-install hook
runs before. */}}
{{- define "catalog-es.podSecurity" -}}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{- define "catalog-es.podSpecCommon" -}}
serviceAccountName: {{ include "catalog-es.serviceAccountName" . }}
{{ include "catalog-es.podSecurity" . }}
{{- end }}

{{/* The root filesystem is read-only: /tmp and the data dir (HOME) are emptyDirs. */}}
{{- define "catalog-es.volumes" -}}
- name: tmp
  emptyDir: {}
- name: data
  emptyDir: {}
{{- end }}

{{- define "catalog-es.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: data
  mountPath: /var/lib/catalog-es
{{- end }}

{{/* Restart pods when their settings change. */}}
{{- define "catalog-es.configChecksums" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
