package codec

import "strings"

// packWords is the dictionary of the packed form of unknown members (pack.go): the member
// names of the Kubernetes API types an informer caches most (core/v1, apps/v1 and
// meta/v1 of k8s.io/api and k8s.io/apimachinery v0.36), and values that recur in them.
// Each occurrence of one of these as a JSON string is kept in two bytes. The list only
// shapes objects in memory, never what is written, so it may change at any time; it may
// hold up to 1024 words.
const packWords = `
/dev/termination-log /var/run/secrets/kubernetes.io/serviceaccount 0 1 100% 25% 50% Always
Apply Available Background BestEffort Block Bound Burstable Cluster ClusterFirst
ClusterFirstWithHostNet ClusterIP Completed ConfigMap ContainerCreating ContainersReady
CrashLoopBackOff CronJob DaemonSet Default Delete Deployment Disabled DiskPressure
DisruptionTarget DoesNotExist Enabled Endpoints Equal ErrImagePull Error Exists ExternalDNS
ExternalIP ExternalName Failed FailedCreate FallbackToLogsOnError False FieldsV1 File
Filesystem Foreground GRPC Gt Guaranteed HTTP HTTPS Hostname IPv4 IPv6 IfNotPresent
IfPossible ImagePullBackOff In Initialized InternalDNS InternalIP Job KubeletReady
LoadBalancer Local Localhost Lt MemoryPressure MinimumReplicasAvailable
MinimumReplicasUnavailable NetworkUnavailable Never NewReplicaSetAvailable NoExecute
NoSchedule Node NodePort None NotIn OOMKilled OnDelete OnFailure OrderedReady Orphan
PIDPressure Parallel Pending PersistentVolumeClaim Pod PodInitializing
PodReadyToStartContainers PodScheduled Port PreemptLowerPriority PreferDualStack
PreferNoSchedule ProgressDeadlineExceeded Progressing ReadOnlyMany ReadWriteMany
ReadWriteOnce Ready Recreate Released ReplicaFailure ReplicaSet ReplicaSetUpdated
RequireDualStack Retain RollingUpdate Running RuntimeDefault SCTP Secret Service
ServiceAccount SingleStack StatefulSet Stopped Succeeded TCP Terminated Terminating True UDP
Unconfined Unknown Unschedulable Update Waiting accessModes action active
activeDeadlineSeconds add address addresses affinity allocatable
allocateLoadBalancerNodePorts allocatedResourceStatuses allocatedResources
allocatedResourcesStatus allowPrivilegeEscalation allowWatchBookmarks amd64 annotations
apiGroup apiVersion appArmorProfile appProtocol apps/v1 architecture args arm64 assigned
audience automountServiceAccountToken availableReplicas awsElasticBlockStore azureDisk
azureFile batch/v1 binaryData blockOwnerDeletion bootID ca.crt cachingMode capabilities
capacity categories causes cells cephfs certificateChainPath chapAuthDiscovery
chapAuthSession cinder claimName claimRef claims clientCIDR clientIP clusterIP clusterIPs
clusterName clusterTrustBundle code collisionCount columnDefinitions command component
conditionType conditions config configMap configMapKeyRef configMapRef configSource
container containerID containerName containerPort containerRuntimeVersion containerStatuses
containers continue controller controllerExpandSecretRef controllerPublishSecretRef count
cpu creationTimestamp credentialBundlePath csi currentNumberScheduled currentReplicas
currentRevision currentVolumeAttributesClassName daemonEndpoints data dataSource
dataSourceRef datasetName datasetUUID declaredFeatures default default-scheduler defaultMode
defaultRequest deletionGracePeriodSeconds deletionTimestamp description
desiredNumberScheduled details devicePath directory diskName diskURI divisor dnsConfig
dnsPolicy downwardAPI driver drop dryRun effect emptyDir enableServiceLinks endpoints
endpointsNamespace env envFrom ephemeral ephemeral-storage ephemeralContainerStatuses
ephemeralContainers error eventTime evictionTime exec exitCode exitCodes expirationSeconds
extendedResourceClaimStatus externalID externalIPs externalName externalTrafficPolicy
failureThreshold fc features field fieldManager fieldPath fieldRef fieldSelector
fieldValidation fields fieldsType fieldsV1 fileKeyRef finalizers finishedAt firstTimestamp
flexVolume flocker follow force format fsGroup fsGroupChangePolicy fsType
fullyLabeledReplicas gateway gcePersistentDisk generateName generation gid gitRepo glusterfs
gmsaCredentialSpec gmsaCredentialSpecName gracePeriodSeconds group groupVersion groups grpc
hard health healthCheckNodePort helm host hostAliases hostIP hostIPC hostIPs hostNetwork
hostPID hostPath hostPort hostProcess hostUsers hostname hostnameOverride hostnames httpGet
httpHeaders hugepages-1Gi hugepages-2Mi ignoreStoreReadErrorWithClusterBreakingPotential
image imageID imagePullPolicy imagePullSecrets imageRef images immutable includeObject
ingress initContainerStatuses initContainers initialDelaySeconds initiatorName
insecureSkipTLSVerifyBackend internalTrafficPolicy involvedObject ip ipFamilies ipFamily
ipFamilyPolicy ipMode iqn iscsi iscsiInterface items kernelVersion key keyPath keyType
keyring kind kube-apiserver kube-controller-manager kube-root-ca.crt kube-scheduler
kubeProxyVersion kubectl kubectl-client-side-apply kubectl-create kubectl-edit kubectl-patch
kubectl-rollout kubelet kubeletConfigKey kubeletEndpoint kubeletVersion kubernetes.io/arch
kubernetes.io/hostname kubernetes.io/os labelSelector labels lastHeartbeatTime lastKnownGood
lastObservedTime lastPhaseTransitionTime lastProbeTime lastState lastTimestamp
lastTransitionTime lastUpdateTime level lifecycle limit limitBytes limits linux
livenessProbe loadBalancer loadBalancerClass loadBalancerIP loadBalancerSourceRanges local
localhostProfile lun machineID managedFields manager matchExpressions matchFields
matchLabelExpressions matchLabelKeys matchLabels max maxExpirationSeconds
maxLimitRequestRatio maxSkew maxSurge maxUnavailable medium memory message metadata
metadata.name metadata.namespace min minDomains minReadySeconds mismatchLabelKeys mode
modifyVolumeStatus monitors mountOptions mountPath mountPropagation name names nameservers
namespace namespaceSelector namespaced namespaces nfs node-role.kubernetes.io/control-plane
node.kubernetes.io/disk-pressure node.kubernetes.io/memory-pressure
node.kubernetes.io/not-ready node.kubernetes.io/pid-pressure node.kubernetes.io/unreachable
node.kubernetes.io/unschedulable nodeAffinity nodeAffinityPolicy
nodeAllocatableResourceClaimStatuses nodeExpandSecretRef nodeInfo nodeName nodePort
nodePublishSecretRef nodeSelector nodeSelectorTerms nodeStageSecretRef nodeTaintsPolicy
nominatedNodeName notReadyAddresses numberAvailable numberMisscheduled numberReady
numberUnavailable object observedGeneration operatingSystem operation operator optional
options ordinals orphanDependents os osImage overhead ownerReferences partition path paths
paused pdID pdName periodSeconds persistentVolumeClaim persistentVolumeClaimRetentionPolicy
persistentVolumeReclaimPolicy phase photonPersistentDisk podAffinity podAffinityTerm
podAntiAffinity podCIDR podCIDRs podCertificate podController podGroupName podIP podIPs
podManagementPolicy podSignature pods policy/v1 pool port portals ports portworxVolume
postStart preStop preconditions preemptionPolicy preferAvoidPods preference
preferredDuringSchedulingIgnoredDuringExecution preferredVersion prefix previous priority
priorityClassName privileged procMount progressDeadlineSeconds projected propagationPolicy
protectionDomain protocol providerID publishNotReadyAddresses pullPolicy qosClass quobyte
range rbd readOnly readOnlyRootFilesystem readinessGates readinessProbe ready readyReplicas
reason recursiveReadOnly recursiveReadOnlyMounts reference registry related
remainingItemCount replicas reportingComponent reportingInstance repository request
requestMappings requestName requests required requiredDuringSchedulingIgnoredDuringExecution
requiredDuringSchedulingRequiredDuringExecution resize resizePolicy resizeStatus resource
resourceClaimName resourceClaimStatuses resourceClaimTemplateName resourceClaims
resourceFieldRef resourceID resourceName resourceVersion resourceVersionMatch resources
restartCount restartPolicy restartPolicyRules retryAfterSeconds revision
revisionHistoryLimit role rollingUpdate rows runAsGroup runAsNonRoot runAsUser runAsUserName
running runtimeClassName runtimeHandlers scaleIO schedulerName schedulingGates
schedulingGroup scheme scopeName scopeSelector scopes seLinuxChangePolicy seLinuxOptions
searches seccompProfile seconds secret secretFile secretKeyRef secretName secretNamespace
secretRef secrets securityContext selector selfLink sendInitialEvents series server
serverAddress serverAddressByClientCIDRs service serviceAccount serviceAccountName
serviceAccountToken serviceName sessionAffinity sessionAffinityConfig setHostnameAsFQDN
shardInfo shardSelector shareName shareProcessNamespace shortNames signal signerName
sinceSeconds sinceTime singularName sizeBytes sizeLimit sleep source sources spec
spec.nodeName sslEnabled start startTime started startedAt startupProbe state status
status.hostIP status.podIP stderr stdin stdinOnce stdout stopSignal storage storageClassName
storageMode storagePolicyID storagePolicyName storagePool storageVersionHash storageos
strategy stream stringData subPath subPathExpr subdomain subresource subsets
successThreshold supplementalGroups supplementalGroupsPolicy swap sysctls system systemUUID
tailLines taints target targetContainerName targetPort targetPortal targetRef
targetVolumeAttributesClassName targetWWNs tcpSocket template templateRef tenant terminated
terminatingReplicas terminationGracePeriodSeconds terminationMessagePath
terminationMessagePolicy time timeAdded timeoutSeconds timestamps token tolerationSeconds
tolerations topology.kubernetes.io/region topology.kubernetes.io/zone topologyKey
topologyKeys topologySpreadConstraints trafficDistribution tty type uid unavailableReplicas
unschedulable updateRevision updateStrategy updatedNumberScheduled updatedReplicas used user
userAnnotations userNamespaces v1 value valueFrom values verbs version versions volume
volumeAttributes volumeAttributesClassName volumeClaimTemplate volumeClaimTemplates
volumeDevices volumeHandle volumeID volumeMode volumeMounts volumeName volumeNamespace
volumePath volumeStatus volumes volumesAttached volumesInUse vsphereVolume waiting watch
weight whenDeleted whenScaled whenUnsatisfiable windowsOptions workingDir workloadRef wwids
`

var words = strings.Fields(packWords)

// wordTable finds a word's index: open addressing on wordHash, each slot the index + 1
// (0 for none). Two bitmaps rule out most other strings before any hashing: wordShapes
// has, for each first byte, a bit for the length of every word that starts with it, and
// wordStarts a bit for the first two bytes of every word (or its only byte and 0). Built
// when the package loads, read-only afterwards.
var wordTable, wordShapes, wordStarts = buildWordTable()

func buildWordTable() (table *[1 << 12]uint16, shapes [256]uint64, starts [1 << 16 / 64]uint64) {
	if len(words) > 1024 {
		panic("codec: more than 1024 packWords")
	}
	table = new([1 << 12]uint16)
	for i, w := range words {
		if strings.ContainsFunc(w, func(r rune) bool { return isMark(r) || r == '"' || r == '\\' }) {
			panic("codec: packWords has a word a JSON string holds escaped: " + w)
		}
		if len(w) > 64 {
			panic("codec: packWords has a word over 64 bytes: " + w)
		}
		shapes[w[0]] |= 1 << (len(w) - 1)
		k := startKey([]byte(w))
		starts[k/64] |= 1 << (k % 64)
		s := wordHash([]byte(w))
		for table[s] != 0 {
			if words[table[s]-1] == w {
				panic("codec: packWords repeats " + w)
			}
			s = (s + 1) & (len(table) - 1)
		}
		table[s] = uint16(i + 1)
	}
	return table, shapes, starts
}

func startKey(b []byte) int {
	if len(b) == 1 {
		return int(b[0]) << 8
	}
	return int(b[0])<<8 | int(b[1])
}

func wordHash(b []byte) int {
	n := len(b)
	h := uint32(n)*0x9e3779b1 ^ uint32(b[0])<<16 ^ uint32(b[n/2])<<8 ^ uint32(b[n-1])
	h *= 0x85ebca6b
	return int(h >> 20) // 12 bits
}

// lookupWord returns the index of the word b, or -1.
func lookupWord(b []byte) int {
	if !mayBeWord(b) {
		return -1
	}
	return findWord(b)
}

// mayBeWord rules out most strings that are not words, in a test cheap enough to be
// inlined where every string of an object goes through it.
func mayBeWord(b []byte) bool {
	n := uint(len(b)) - 1 // n >= 64: empty, or longer than any word
	return n < 64 && wordShapes[b[0]]&(1<<n) != 0
}

// findWord returns the index of the word b, or -1.
func findWord(b []byte) int {
	if k := startKey(b); wordStarts[k/64]&(1<<(k%64)) == 0 {
		return -1
	}
	for s := wordHash(b); ; s = (s + 1) & (len(wordTable) - 1) {
		e := wordTable[s]
		if e == 0 {
			return -1
		}
		if words[e-1] == string(b) {
			return int(e - 1)
		}
	}
}
