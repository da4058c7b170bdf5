{{/* Labels Helm adds to every object it owns; the install's own labels are written out in each template. */}}
{{- define "thermocline-operator.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "thermocline-operator.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}


{{/* The operator's rules, one list for the Role(s) and the cluster-wide ClusterRole (examples/install/rbac.yaml explains them). */}}
{{- define "thermocline-operator.rules" }}
  - apiGroups: ["thermocline.io"]
    resources: ["thermoclineclusters"]
    verbs: ["get", "list", "watch", "patch", "update"]
  - apiGroups: ["thermocline.io"]
    resources: ["thermoclineclusters/status", "thermoclineclusters/finalizers"]
    verbs: ["get", "patch", "update"]
  # every Secret of the watched namespaces: the archive Secrets are the user's (no label to select them by)
  # and the generated ones are named after each resource; resourceNames cannot restrict create, list or watch
  - apiGroups: [""]
    resources: ["secrets", "services", "configmaps"]
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
  - apiGroups: ["apps"]
    resources: ["statefulsets", "deployments"]
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
  - apiGroups: ["batch"]
    resources: ["jobs", "cronjobs"]
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
  - apiGroups: ["policy"]
    resources: ["poddisruptionbudgets"]
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
  - apiGroups: ["networking.k8s.io"]
    resources: ["networkpolicies"]
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
  # ServiceMonitors, only reconciled while prometheus-operator's CRD is installed (API discovery needs no right)
  - apiGroups: ["monitoring.coreos.com"]
    resources: ["servicemonitors"]
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
  # which members run an old template, whether the proxy's pods are gone; delete: restart one member at a time
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["list", "delete"]
  - apiGroups: [""]
    resources: ["persistentvolumeclaims"]
    verbs: ["get", "patch"]
  - apiGroups: [""]
    resources: ["events"]
    verbs: ["create"]
{{- end -}}

{{/* QUARKUS_OPERATOR_SDK_NAMESPACES: what the RBAC above lets the operator watch. */}}
{{- define "thermocline-operator.watchedNamespaces" -}}
{{- if .Values.watch.clusterWide -}}
JOSDK_ALL_NAMESPACES
{{- else if .Values.watch.namespaces -}}
{{ join "," .Values.watch.namespaces }}
{{- else -}}
JOSDK_WATCH_CURRENT
{{- end -}}
{{- end -}}
