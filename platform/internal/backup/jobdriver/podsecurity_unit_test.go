package jobdriver

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// secure gives a plain template restricted's defaults and the backup
// ServiceAccount, and refuses one asking for more, naming every field.
func TestSecure(t *testing.T) {
	plain := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "backup", Image: "registry.example/tool:1"}}}}
	if err := secure("backup", "c", &plain); err != nil {
		t.Fatalf("a plain template: %v", err)
	}
	if s := plain.Spec; s.ServiceAccountName != ServiceAccount || !*s.SecurityContext.RunAsNonRoot || *s.AutomountServiceAccountToken ||
		s.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || *s.Containers[0].SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("defaults not set: %+v", s)
	}
	bad := corev1.PodTemplateSpec{Spec: corev1.PodSpec{HostPID: true, HostNetwork: true, ServiceAccountName: "cozystack-controller",
		Volumes:    []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
		Containers: []corev1.Container{{Name: "x", Image: "i", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true), RunAsUser: ptr.To[int64](0)}}}}}
	err := secure("backup", "evil", &bad)
	var re *driver.RunError
	if !errors.As(err, &re) || re.Reason != v1alpha1.ReasonPodSecurityViolation {
		t.Fatalf("got %v, want a PodSecurityViolation", err)
	}
	for _, s := range []string{"BackupClass evil", `serviceAccountName is "cozystack-controller"`, "privileged", "hostNetwork=true", "hostPID=true", `volume "root" uses restricted volume type "hostPath"`, "runAsUser=0"} {
		if !strings.Contains(re.Message, s) {
			t.Errorf("message %q does not name %q", re.Message, s)
		}
	}
}
