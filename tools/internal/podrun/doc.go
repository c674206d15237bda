// Package podrun runs a pod's container as a local process, the way the
// main job (tools/internal/mainjob) and the end-to-end tests run the
// catalogs' backup drivers where no pods run: Args gives the container's
// arguments as the kubelet expands them, with the ports it serves moved to
// loopback, and Kubeconfig authenticates as the pod's ServiceAccount with a
// token from the TokenRequest API, so the process holds exactly the rights
// a cluster would give the pod.
package podrun
