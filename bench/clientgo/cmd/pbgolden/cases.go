package main

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
)

// The objects are made of fixed values only: no clock, no randomness. Every
// metav1.Time is a whole second, as the apiserver stores them (the protobuf encoding
// of Time drops sub-seconds, its JSON encoding too); MicroTimes carry microseconds.

// t0 is the creation of everything; at(s) is s seconds later.
var t0 = time.Date(2026, time.March, 14, 9, 26, 53, 0, time.UTC)

func at(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }

func atp(s int) *metav1.Time { t := at(s); return &t }

// micro is s seconds and us microseconds after t0, as a MicroTime.
func micro(s, us int) metav1.MicroTime {
	return metav1.NewMicroTime(t0.Add(time.Duration(s)*time.Second + time.Duration(us)*time.Microsecond))
}

func ptr[T any](v T) *T { return &v }

func q(s string) resource.Quantity { return resource.MustParse(s) }

// Fixed UIDs, one per object named.
const (
	uidPod        = "3f2a6c1e-9b7d-4e5f-8a1b-2c3d4e5f6a7b"
	uidReplicaSet = "8c1d2e3f-4a5b-4c6d-9e7f-0a1b2c3d4e5f"
	uidDeployment = "b7e6d5c4-b3a2-4190-8f7e-6d5c4b3a2910"
	uidConfigMap  = "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
	uidNode       = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d"
	uidEvent      = "9d8c7b6a-5f4e-4d3c-ab2a-1f0e9d8c7b6a"
	uidSecret     = "2b3c4d5e-6f70-4182-93a4-b5c6d7e8f901"
	uidLease      = "c0ffee00-1234-4abc-8def-0123456789ab"
)

const (
	webImage       = "registry.example.com/shop/web:1.4.2"
	webImageID     = "registry.example.com/shop/web@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
	sidecarImage   = "docker.io/envoyproxy/envoy:v1.31.2"
	sidecarImageID = "docker.io/envoyproxy/envoy@sha256:0c2a8a1b5b5c2f4fb9c1bb0a6e1e4d1c72aa3d9f2c0e2b7f3d4a5b6c7d8e9f01"
	initImage      = "registry.example.com/shop/migrate:1.4.2"
	initImageID    = "registry.example.com/shop/migrate@sha256:9e107d9d372bb6826bd81d3542a419d6e277d4d731479577a1e63c1f27b8e47a"
)

// podFull is a Pod with every commonly set field of metadata, spec and status, and
// many a decoder may not model.
func podFull() *corev1.Pod {
	labels := map[string]string{
		"app":                       "web",
		"app.kubernetes.io/version": "1.4.2",
		"pod-template-hash":         "7d9f8b6c5d",
		"tier":                      "frontend",
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:                       "web-7d9f8b6c5d-x2k4p",
			GenerateName:               "web-7d9f8b6c5d-",
			Namespace:                  "shop",
			UID:                        uidPod,
			ResourceVersion:            "48213",
			Generation:                 3,
			CreationTimestamp:          at(0),
			DeletionTimestamp:          atp(3600),
			DeletionGracePeriodSeconds: ptr(int64(30)),
			Labels:                     labels,
			Annotations: map[string]string{
				// Beyond ASCII: 2-, 3- and 4-byte UTF-8, and U+2028, which Go's JSON
				// encoder writes as \u2028.
				"example.com/greeting": "héllo wörld — 日本語 ✓ 🚀 \u2028end",
				// Quotes, backslashes and control characters, escaped in JSON.
				"example.com/quoted": `say "hi" to C:\temp\new` + "\ttab\nnewline",
				// <, > and &, which Go's JSON encoder writes as \u003c, \u003e, \u0026.
				"example.com/html":                  `<a href="x">&amp;</a>`,
				"kubectl.kubernetes.io/restartedAt": "2026-03-14T09:00:00Z",
				"example.com/empty":                 "",
				"prometheus.io/scrape":              "true",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         "apps/v1",
				Kind:               "ReplicaSet",
				Name:               "web-7d9f8b6c5d",
				UID:                uidReplicaSet,
				Controller:         ptr(true),
				BlockOwnerDeletion: ptr(true),
			}, {
				APIVersion: "v1",
				Kind:       "ConfigMap",
				Name:       "web-config",
				UID:        uidConfigMap,
			}},
			Finalizers: []string{"example.com/cleanup", "foregroundDeletion"},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager:    "kube-controller-manager",
				Operation:  metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1",
				Time:       atp(0),
				FieldsType: "FieldsV1",
				FieldsV1:   &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"` + uidReplicaSet + `\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}`)},
			}, {
				Manager:     "kubelet",
				Operation:   metav1.ManagedFieldsOperationUpdate,
				APIVersion:  "v1",
				Time:        atp(9),
				FieldsType:  "FieldsV1",
				FieldsV1:    &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:phase":{},"f:podIP":{}}}`)},
				Subresource: "status",
			}},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{
				Name: "kube-api-access-x7q2m",
				VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{{
						ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"},
					}, {
						ConfigMap: &corev1.ConfigMapProjection{
							LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
							Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
						},
					}, {
						DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
							Path:     "namespace",
							FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
						}}},
					}},
					DefaultMode: ptr(int32(420)),
				}},
			}, {
				Name: "cache",
				VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
					Medium:    corev1.StorageMediumMemory,
					SizeLimit: ptr(q("64Mi")),
				}},
			}},
			InitContainers: []corev1.Container{{
				Name:    "init-migrate",
				Image:   initImage,
				Command: []string{"/bin/migrate"},
				Args:    []string{"--database=$(DB_URL)", "--timeout=30s"},
				Env: []corev1.EnvVar{{
					Name: "DB_URL",
					ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "web-db"},
						Key:                  "url",
						Optional:             ptr(false),
					}},
				}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: q("50m"), corev1.ResourceMemory: q("64Mi")},
				},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			Containers: []corev1.Container{{
				Name:       "web",
				Image:      webImage,
				Args:       []string{"--listen=:8080", "--metrics=:9090"},
				WorkingDir: "/srv",
				Ports: []corev1.ContainerPort{
					{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
					{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP},
				},
				Env: []corev1.EnvVar{
					{Name: "LOG_LEVEL", Value: "info"},
					{Name: "EMPTY", Value: ""},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
					{Name: "CPU_LIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
						ContainerName: "web", Resource: "limits.cpu", Divisor: q("1m"),
					}}},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")},
					Limits: corev1.ResourceList{
						corev1.ResourceCPU:              q("1500m"),
						corev1.ResourceMemory:           q("256Mi"),
						corev1.ResourceEphemeralStorage: q("1G"),
					},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "kube-api-access-x7q2m", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"},
					{Name: "cache", MountPath: "/cache", SubPath: "web"},
				},
				LivenessProbe: &corev1.Probe{
					ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
						Path: "/healthz", Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP,
					}},
					InitialDelaySeconds: 10, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
						Path: "/ready", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP,
						HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Probe", Value: "ready"}},
					}},
					TimeoutSeconds: 2, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: 3,
				},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
				SecurityContext: &corev1.SecurityContext{
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					RunAsUser:                ptr(int64(1000)),
					RunAsNonRoot:             ptr(true),
					ReadOnlyRootFilesystem:   ptr(true),
					AllowPrivilegeEscalation: ptr(false),
				},
			}, {
				Name:  "sidecar",
				Image: sidecarImage,
				Args:  []string{"-c", "/etc/envoy/envoy.yaml", "--log-level", "warn"},
				Ports: []corev1.ContainerPort{{Name: "admin", ContainerPort: 9901, Protocol: corev1.ProtocolTCP}, {ContainerPort: 15001, Protocol: corev1.ProtocolUDP, HostPort: 15001}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: q("10m"), corev1.ResourceMemory: q("32Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: q("64Mi")},
				},
				StartupProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "test -f /tmp/ready"}}},
					PeriodSeconds: 2, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 30,
				},
				VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access-x7q2m", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				ImagePullPolicy:          corev1.PullAlways,
			}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr(int64(30)),
			DNSPolicy:                     corev1.DNSClusterFirst,
			NodeSelector:                  map[string]string{"kubernetes.io/os": "linux"},
			ServiceAccountName:            "web",
			DeprecatedServiceAccount:      "web",
			AutomountServiceAccountToken:  ptr(true),
			NodeName:                      "node-a",
			SecurityContext: &corev1.PodSecurityContext{
				FSGroup:        ptr(int64(2000)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			SchedulerName: corev1.DefaultSchedulerName,
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "shop", Effect: corev1.TaintEffectNoSchedule},
			},
			Priority:           ptr(int32(0)), // a pointer to zero: present on the wire
			EnableServiceLinks: ptr(true),
			PreemptionPolicy:   ptr(corev1.PreemptLowerPriority),
		},
		Status: corev1.PodStatus{
			ObservedGeneration: 3,
			Phase:              corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: at(1)},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: at(6)},
				{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, ObservedGeneration: 3, LastTransitionTime: at(9),
					Reason: "ContainersNotReady", Message: "containers with unready status: [sidecar]"},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, ObservedGeneration: 3, LastTransitionTime: at(9),
					Reason: "ContainersNotReady", Message: "containers with unready status: [sidecar]"},
			},
			HostIP:    "10.0.1.17",
			HostIPs:   []corev1.HostIP{{IP: "10.0.1.17"}},
			PodIP:     "10.244.1.23",
			PodIPs:    []corev1.PodIP{{IP: "10.244.1.23"}, {IP: "fd00:10:244:1::17"}},
			StartTime: atp(1),
			InitContainerStatuses: []corev1.ContainerStatus{{
				Name: "init-migrate",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: at(3), FinishedAt: at(5),
					ContainerID: "containerd://1111111111111111111111111111111111111111111111111111111111111111",
				}},
				Ready:        true,
				RestartCount: 0,
				Image:        initImage,
				ImageID:      initImageID,
				ContainerID:  "containerd://1111111111111111111111111111111111111111111111111111111111111111",
				Started:      ptr(false),
			}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name:         "web",
				State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(7)}},
				Ready:        true,
				RestartCount: 0,
				Image:        webImage,
				ImageID:      webImageID,
				ContainerID:  "containerd://2222222222222222222222222222222222222222222222222222222222222222",
				Started:      ptr(true),
				VolumeMounts: []corev1.VolumeMountStatus{
					{Name: "kube-api-access-x7q2m", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true, RecursiveReadOnly: ptr(corev1.RecursiveReadOnlyDisabled)},
					{Name: "cache", MountPath: "/cache"},
				},
				User: &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 1000, GID: 1000, SupplementalGroups: []int64{1000, 2000}}},
			}, {
				Name: "sidecar",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason:  "CrashLoopBackOff",
					Message: "back-off 40s restarting failed container=sidecar pod=web-7d9f8b6c5d-x2k4p_shop(" + uidPod + ")",
				}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Signal: 9, Reason: "OOMKilled", Message: "killed: out of memory",
					StartedAt: at(60), FinishedAt: at(95),
					ContainerID: "containerd://3333333333333333333333333333333333333333333333333333333333333333",
				}},
				Ready:        false,
				RestartCount: 4,
				Image:        sidecarImage,
				ImageID:      sidecarImageID,
				ContainerID:  "containerd://3333333333333333333333333333333333333333333333333333333333333333",
				Started:      ptr(false),
				VolumeMounts: []corev1.VolumeMountStatus{
					{Name: "kube-api-access-x7q2m", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true, RecursiveReadOnly: ptr(corev1.RecursiveReadOnlyDisabled)},
				},
			}},
			QOSClass: corev1.PodQOSBurstable,
		},
	}
}

// podMinimal is a Pod with a name and a namespace only.
func podMinimal() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "minimal", Namespace: "default"}}
}

// webTemplate is the pod template of the web Deployment and its ReplicaSet.
func webTemplate(hash string) corev1.PodTemplateSpec {
	labels := map[string]string{"app": "web", "tier": "frontend"}
	if hash != "" {
		labels["pod-template-hash"] = hash
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      labels,
			Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-03-14T09:00:00Z", "prometheus.io/scrape": "true"},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "web",
				Image: webImage,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")},
				},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr(int64(30)),
			DNSPolicy:                     corev1.DNSClusterFirst,
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 corev1.DefaultSchedulerName,
		},
	}
}

func replicaSet() *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "web-7d9f8b6c5d",
			Namespace:         "shop",
			UID:               uidReplicaSet,
			ResourceVersion:   "48190",
			Generation:        2,
			CreationTimestamp: at(-60),
			Labels:            map[string]string{"app": "web", "pod-template-hash": "7d9f8b6c5d", "tier": "frontend"},
			Annotations: map[string]string{
				"deployment.kubernetes.io/desired-replicas": "3",
				"deployment.kubernetes.io/max-replicas":     "4",
				"deployment.kubernetes.io/revision":         "5",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: uidDeployment,
				Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        ptr(int32(3)),
			MinReadySeconds: 5,
			Selector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"app": "web", "pod-template-hash": "7d9f8b6c5d"},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"frontend", "edge"}},
					{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist},
				},
			},
			Template: webTemplate("7d9f8b6c5d"),
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas:             3,
			FullyLabeledReplicas: 3,
			ReadyReplicas:        2,
			AvailableReplicas:    2,
			TerminatingReplicas:  ptr(int32(1)),
			ObservedGeneration:   2,
			Conditions: []appsv1.ReplicaSetCondition{{
				Type:               appsv1.ReplicaSetReplicaFailure,
				Status:             corev1.ConditionTrue,
				LastTransitionTime: at(120),
				Reason:             "FailedCreate",
				Message:            `pods "web-7d9f8b6c5d-9zz8q" is forbidden: exceeded quota: compute, requested: limits.memory=256Mi, used: limits.memory=1Gi, limited: limits.memory=1Gi`,
			}},
		},
	}
}

func deploymentMeta(rv string, generation int64) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              "web",
		Namespace:         "shop",
		UID:               uidDeployment,
		ResourceVersion:   rv,
		Generation:        generation,
		CreationTimestamp: at(-86400),
		Labels:            map[string]string{"app": "web"},
		Annotations:       map[string]string{"deployment.kubernetes.io/revision": "5"},
	}
}

func deploymentRolling() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: deploymentMeta("48191", 7),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: webTemplate(""),
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr(intstr.FromInt32(1)),
					MaxSurge:       ptr(intstr.FromString("25%")),
				},
			},
			MinReadySeconds:         10,
			RevisionHistoryLimit:    ptr(int32(10)),
			Paused:                  false,
			ProgressDeadlineSeconds: ptr(int32(600)),
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration:  7,
			Replicas:            4,
			UpdatedReplicas:     2,
			ReadyReplicas:       3,
			AvailableReplicas:   3,
			UnavailableReplicas: 1,
			TerminatingReplicas: ptr(int32(0)), // a pointer to zero: present on the wire
			Conditions: []appsv1.DeploymentCondition{{
				Type:               appsv1.DeploymentAvailable,
				Status:             corev1.ConditionTrue,
				LastUpdateTime:     at(-80000),
				LastTransitionTime: at(-80000),
				Reason:             "MinimumReplicasAvailable",
				Message:            "Deployment has minimum availability.",
			}, {
				Type:               appsv1.DeploymentProgressing,
				Status:             corev1.ConditionTrue,
				LastUpdateTime:     at(130),
				LastTransitionTime: at(-86400),
				Reason:             "ReplicaSetUpdated",
				Message:            `ReplicaSet "web-7d9f8b6c5d" is progressing.`,
			}},
			CollisionCount: ptr(int32(1)),
		},
	}
}

func deploymentRecreate() *appsv1.Deployment {
	meta := deploymentMeta("48300", 2)
	meta.Name, meta.UID = "batch", "b7e6d5c4-b3a2-4190-8f7e-6d5c4b3a2911"
	return &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas:                ptr(int32(0)), // a pointer to zero: present on the wire
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:                webTemplate(""),
			Strategy:                appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			RevisionHistoryLimit:    ptr(int32(2)),
			Paused:                  true,
			ProgressDeadlineSeconds: ptr(int32(600)),
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2,
			Conditions: []appsv1.DeploymentCondition{{
				Type:               appsv1.DeploymentProgressing,
				Status:             corev1.ConditionUnknown,
				LastUpdateTime:     at(200),
				LastTransitionTime: at(200),
				Reason:             "DeploymentPaused",
				Message:            "Deployment is paused",
			}},
		},
	}
}

func lease() *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "kube-controller-manager",
			Namespace:         "kube-system",
			UID:               uidLease,
			ResourceVersion:   "48555",
			CreationTimestamp: at(-86400),
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr("node-a_6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f"),
			LeaseDurationSeconds: ptr(int32(15)),
			AcquireTime:          ptr(micro(-3600, 123456)),
			RenewTime:            ptr(micro(42, 654321)),
			LeaseTransitions:     ptr(int32(3)),
		},
	}
}

func leaseEmpty() *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name:              "apiserver-empty",
		Namespace:         "kube-system",
		UID:               "c0ffee00-1234-4abc-8def-0123456789ac",
		ResourceVersion:   "48556",
		CreationTimestamp: at(10),
	}}
}

func node() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "node-a",
			UID:               uidNode,
			ResourceVersion:   "48600",
			CreationTimestamp: at(-864000),
			Labels: map[string]string{
				"beta.kubernetes.io/arch":               "amd64",
				"beta.kubernetes.io/os":                 "linux",
				"kubernetes.io/arch":                    "amd64",
				"kubernetes.io/hostname":                "node-a",
				"kubernetes.io/os":                      "linux",
				"node.kubernetes.io/instance-type":      "m6i.2xlarge",
				"topology.kubernetes.io/region":         "eu-west-1",
				"topology.kubernetes.io/zone":           "eu-west-1a",
				"node-role.kubernetes.io/control-plane": "",
			},
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: corev1.NodeSpec{
			PodCIDR:    "10.244.1.0/24",
			PodCIDRs:   []string{"10.244.1.0/24", "fd00:10:244:1::/64"},
			ProviderID: "aws:///eu-west-1a/i-0123456789abcdef0",
			Taints: []corev1.Taint{
				{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule},
				{Key: "example.com/maintenance", Value: "true", Effect: corev1.TaintEffectNoExecute, TimeAdded: atp(300)},
			},
		},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:              q("8"),
				corev1.ResourceMemory:           q("32386524Ki"),
				corev1.ResourcePods:             q("110"),
				corev1.ResourceEphemeralStorage: q("104845292Ki"),
				"hugepages-2Mi":                 q("0"),
			},
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU:              q("7910m"),
				corev1.ResourceMemory:           q("31235548Ki"),
				corev1.ResourcePods:             q("110"),
				corev1.ResourceEphemeralStorage: q("96625420948"),
				"hugepages-2Mi":                 q("0"),
			},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: at(40), LastTransitionTime: at(-864000),
					Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
				{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: at(40), LastTransitionTime: at(-864000),
					Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
				{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: at(40), LastTransitionTime: at(-864000),
					Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: at(40), LastTransitionTime: at(-863990),
					Reason: "KubeletReady", Message: "kubelet is posting ready status"},
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "10.0.1.17"},
				{Type: corev1.NodeInternalIP, Address: "fd00::17"},
				{Type: corev1.NodeHostName, Address: "node-a"},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID:               "ec2a1b2c3d4e5f60718293a4b5c6d7e8",
				SystemUUID:              "ec2a1b2c-3d4e-5f60-7182-93a4b5c6d7e8",
				BootID:                  "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
				KernelVersion:           "6.8.0-1021-aws",
				OSImage:                 "Ubuntu 24.04.2 LTS",
				ContainerRuntimeVersion: "containerd://2.0.5",
				KubeletVersion:          "v1.36.3",
				KubeProxyVersion:        "",
				OperatingSystem:         "linux",
				Architecture:            "amd64",
				Swap:                    &corev1.NodeSwapStatus{Capacity: ptr(int64(0))},
			},
			Images: []corev1.ContainerImage{
				{Names: []string{webImageID, webImage}, SizeBytes: 58745123},
				{Names: []string{sidecarImageID, sidecarImage}, SizeBytes: 3221225472}, // above 2^31
			},
			Features: &corev1.NodeFeatures{SupplementalGroupsPolicy: ptr(true)},
		},
	}
}

func event() *corev1.Event {
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "web-7d9f8b6c5d-x2k4p.17c9f1a2b3c4d5e6",
			Namespace:         "shop",
			UID:               uidEvent,
			ResourceVersion:   "48400",
			CreationTimestamp: at(60),
		},
		InvolvedObject: corev1.ObjectReference{
			Kind:            "Pod",
			Namespace:       "shop",
			Name:            "web-7d9f8b6c5d-x2k4p",
			UID:             uidPod,
			APIVersion:      "v1",
			ResourceVersion: "48213",
			FieldPath:       "spec.containers{sidecar}",
		},
		Reason:              "BackOff",
		Message:             "Back-off restarting failed container sidecar in pod web-7d9f8b6c5d-x2k4p_shop(" + uidPod + ")",
		Source:              corev1.EventSource{Component: "kubelet", Host: "node-a"},
		FirstTimestamp:      at(60),
		LastTimestamp:       at(95),
		Count:               7,
		Type:                corev1.EventTypeWarning,
		EventTime:           micro(60, 250001),
		Series:              &corev1.EventSeries{Count: 6, LastObservedTime: micro(95, 999999)},
		Action:              "Restarting",
		Related:             &corev1.ObjectReference{Kind: "Node", Name: "node-a", UID: uidNode, APIVersion: "v1"},
		ReportingController: "kubelet",
		ReportingInstance:   "node-a",
	}
}

func secret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "web-db",
			Namespace:         "shop",
			UID:               uidSecret,
			ResourceVersion:   "48001",
			CreationTimestamp: at(-3600),
			Labels:            map[string]string{"app": "web"},
		},
		Immutable: ptr(false),
		Data: map[string][]byte{
			"binary":   {0x00, 0x01, 0x7f, 0x80, 0xc3, 0x28, 0xfe, 0xff, 0x00},
			"empty":    {},
			"password": []byte("s3cr3t\n"),
			"url":      []byte("postgres://web:s3cr3t@db.shop.svc:5432/web?sslmode=require"),
		},
		Type: corev1.SecretTypeOpaque,
	}
}

func configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "web-config",
			Namespace:         "shop",
			UID:               uidConfigMap,
			ResourceVersion:   "48002",
			CreationTimestamp: at(-3600),
			Annotations:       map[string]string{"example.com/owner": "team-shop"},
		},
		Immutable: ptr(true),
		Data: map[string]string{
			"app.properties": "listen=:8080\nlog.level=info\ngreeting=héllo\n",
			"empty":          "",
			"settings.json":  `{"retries":3,"backoff":"1s","tags":["a","b"]}`,
		},
		BinaryData: map[string][]byte{
			"logo.bin": {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0x00, 0xff},
		},
	}
}

// podList is a PodList of three varied small pods; as in any list, the items have no
// apiVersion and kind.
func podList() *corev1.PodList {
	return &corev1.PodList{
		ListMeta: metav1.ListMeta{
			ResourceVersion:    "12345",
			Continue:           "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzNDV9",
			RemainingItemCount: ptr(int64(42)),
		},
		Items: []corev1.Pod{{
			ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"},
		}, {
			ObjectMeta: metav1.ObjectMeta{
				Name: "b", Namespace: "default", UID: "00000000-0000-4000-8000-00000000000b",
				ResourceVersion: "12000", CreationTimestamp: at(0),
				Labels: map[string]string{"app": "b"},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort,
				Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, LastTransitionTime: at(1),
					Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient cpu."}}},
		}, {
			ObjectMeta: metav1.ObjectMeta{
				Name: "c", Namespace: "kube-system", UID: "00000000-0000-4000-8000-00000000000c",
				ResourceVersion: "12345", CreationTimestamp: at(2),
				Annotations: map[string]string{"note": "ünïcødé"},
			},
			Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36",
				Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.1.9", StartTime: atp(3)},
		}},
	}
}

func status410() *metav1.Status {
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Message: "too old resource version: 1 (5)",
		Reason:  metav1.StatusReasonExpired,
		Code:    410,
	}
}

func status404() *metav1.Status {
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Message: `pods "web-0" not found`,
		Reason:  metav1.StatusReasonNotFound,
		Details: &metav1.StatusDetails{
			Name: "web-0",
			Kind: "pods",
			Causes: []metav1.StatusCause{{
				Type:    metav1.CauseTypeFieldValueNotFound,
				Message: `pod "web-0" does not exist`,
				Field:   "metadata.name",
			}},
			RetryAfterSeconds: 3,
		},
		Code: 404,
	}
}

// watchEvents are the events of watch.pb and watch.json, in order.
func watchEvents() []watch.Event {
	deleted := podMinimal()
	deleted.ResourceVersion = "1001"
	bookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: "999",
		Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
	}}
	return []watch.Event{
		{Type: watch.Added, Object: podMinimal()},
		{Type: watch.Modified, Object: podFull()},
		{Type: watch.Deleted, Object: deleted},
		{Type: watch.Bookmark, Object: bookmark},
		{Type: watch.Error, Object: status410()},
	}
}

// golden is one NAME.json / NAME.pb pair.
type golden struct {
	name string
	obj  runtime.Object
	note string // what it is, for the README
}

// fixedCases are the hand-made objects, in README order (the stream server's pods go
// after pod-minimal).
func fixedCases() []golden {
	return []golden{
		{"pod-full", podFull(), "core/v1 Pod with every commonly set field of metadata, spec and status (unicode and escaped annotations, owner references, managedFields, projected and emptyDir volumes, probes with int and named ports, quantities, container statuses in every state)"},
		{"pod-minimal", podMinimal(), "core/v1 Pod with only a name and a namespace (empty spec and status)"},
		{"replicaset", replicaSet(), "apps/v1 ReplicaSet with selector expressions, pod template, status with terminatingReplicas and a ReplicaFailure condition"},
		{"deployment-rolling", deploymentRolling(), "apps/v1 Deployment, RollingUpdate with maxSurge \"25%\" (string) and maxUnavailable 1 (int), conditions with lastUpdateTime"},
		{"deployment-recreate", deploymentRecreate(), "apps/v1 Deployment, Recreate, paused, replicas 0"},
		{"lease", lease(), "coordination.k8s.io/v1 Lease with MicroTimes carrying microseconds"},
		{"lease-empty", leaseEmpty(), "coordination.k8s.io/v1 Lease with an empty spec"},
		{"node", node(), "core/v1 Node with taints, capacity/allocatable quantities, conditions, addresses, nodeInfo, images"},
		{"event", event(), "core/v1 Event with involvedObject, series, eventTime (MicroTime), reportingComponent"},
		{"secret", secret(), "core/v1 Secret with binary data (0x00, 0xff, invalid UTF-8) and an empty value"},
		{"configmap", configMap(), "core/v1 ConfigMap with data and binaryData"},
		{"podlist", podList(), "core/v1 PodList of 3 pods with resourceVersion, continue and remainingItemCount (items carry no apiVersion/kind)"},
		{"status-410", status410(), "meta/v1 Status: 410 Expired, as a watch's ERROR event carries it"},
		{"status-404", status404(), "meta/v1 Status: 404 NotFound with details, a cause and retryAfterSeconds"},
	}
}
