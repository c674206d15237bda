package v1alpha1

// SnapshotRef refers to an application's spec captured when a BackupJob
// was bound: the HelmRelease it was read from and the sha256 digest of the
// values, which are stored once per distinct digest in a ConfigMap the
// core owns in the job's namespace (ConfigMapName). A BackupJob's status
// and a Backup's spec carry only this reference, a few hundred bytes
// whatever the size of the application (contract k7, "Snapshots"), so a
// large application does not grow etcd by its size with every job and
// every later status write. Read the values through
// cozystack.io/sdk/backup/snapshot, which verifies the digest.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a snapshot reference is written once and never changes"
type SnapshotRef struct {
	// ReleaseName is the application's HelmRelease, in the job's
	// namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ReleaseName string `json:"releaseName"`
	// ReleaseGeneration is the HelmRelease's metadata.generation when the
	// values were read.
	// +optional
	ReleaseGeneration int64 `json:"releaseGeneration,omitempty"`
	// Digest is "sha256:" and the lowercase hex sha256 of the values in
	// their canonical JSON form (object keys sorted, no insignificant
	// space), the bytes the ConfigMap holds.
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	Digest string `json:"digest"`
	// Size is the length in bytes of the canonical values.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Size int64 `json:"size,omitempty"`
	// ConfigMapName is the ConfigMap in the job's (the Backup's)
	// namespace holding the values under the key "values.json".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ConfigMapName string `json:"configMapName"`
}
