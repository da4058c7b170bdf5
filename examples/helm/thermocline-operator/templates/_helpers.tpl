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
  # the resource: informer (list, watch), finalizer (patch), status (patch); see OperatorRbacTest for get
  - apiGroups: ["thermocline.io"]
    resources: ["thermoclineclusters"]
    verbs: ["get", "list", "watch", "patch"]
  - apiGroups: ["thermocline.io"]
    resources: ["thermoclineclusters/status"]
    verbs: ["patch"]
  # owner references with blockOwnerDeletion need it where OwnerReferencesPermissionEnforcement is on
  - apiGroups: ["thermocline.io"]
    resources: ["thermoclineclusters/finalizers"]
    verbs: ["update"]
  # every Secret of the watched namespaces: the archive Secrets are the user's (no label to select them by)
  # and the generated ones are named after each resource, so resourceNames cannot name them in advance
  # (and cannot restrict create, list or watch at all). delete: the generated two, with retentionPolicy Delete
  - apiGroups: [""]
    resources: ["secrets"]
    verbs: ["get", "list", "watch", "create", "patch", "delete"]
  # the dependents, read from informers (list, watch) and written with server-side apply (create, patch);
  # Kubernetes' garbage collector deletes most through their owner references. delete: what the drain before
  # deletion needs (fast tier, proxy, feeder, their Services and config) has no owner reference, so no
  # propagation policy can collect it mid-drain: the operator deletes it after the drain
  - apiGroups: [""]
    resources: ["services", "configmaps"]
    verbs: ["list", "watch", "create", "patch", "delete"]
  # get: the drain reads the proxy and feeder, the replica-set steps the StatefulSet's replicas
  - apiGroups: ["apps"]
    resources: ["statefulsets", "deployments"]
    verbs: ["get", "list", "watch", "create", "patch", "delete"]
  - apiGroups: ["batch"]
    resources: ["cronjobs"]
    verbs: ["list", "watch", "create", "patch"]
  # the warmer Jobs of earlier windows are deleted
  - apiGroups: ["batch"]
    resources: ["jobs"]
    verbs: ["get", "list", "watch", "create", "patch", "delete"]
  - apiGroups: ["policy"]
    resources: ["poddisruptionbudgets"]
    verbs: ["list", "watch", "create", "patch"]
  - apiGroups: ["networking.k8s.io"]
    resources: ["networkpolicies"]
    verbs: ["list", "watch", "create", "patch"]
  # cert-manager Certificates of the fast tier, only with spec.tls.issuerRef: read, created, changed with a patch
  - apiGroups: ["cert-manager.io"]
    resources: ["certificates"]
    verbs: ["get", "create", "patch"]
  # ServiceMonitors, only while prometheus-operator's CRD is installed (API discovery needs no right);
  # delete: JOSDK removes it when the CRD goes
  - apiGroups: ["monitoring.coreos.com"]
    resources: ["servicemonitors"]
    verbs: ["list", "watch", "create", "patch", "delete"]
  # which members run an old template, whether the proxy's pods are gone; delete: restart one member at a time
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["list", "delete"]
  # grow a member's volume (get, patch); list, delete: with retentionPolicy Delete the operator deletes the
  # members' PVCs after the drain (the StatefulSet controller never does: whenDeleted is Retain)
  - apiGroups: [""]
    resources: ["persistentvolumeclaims"]
    verbs: ["get", "list", "patch", "delete"]
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

{{/* monitoring.selectorLabels as key=value,key=value (the operator's THERMOCLINE_OPERATOR_MONITORING_LABELS) */}}
{{- define "thermocline-operator.selectorLabels" -}}
{{- $pairs := list -}}
{{- range $k, $v := .Values.monitoring.selectorLabels -}}
{{- $pairs = append $pairs (printf "%s=%s" $k $v) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}
