#include <xf86drm.h>
#include <xf86drmMode.h>
#include <sys/timerfd.h>

/// An atomic commit from caller-owned arrays (DRM_IOCTL_MODE_ATOMIC): libdrm's
/// drmModeAtomicCommit copies and sorts its request on every call; a page flip must not allocate.
static inline int cdrm_atomic_commit(int fd, struct drm_mode_atomic *request) {
    return drmIoctl(fd, DRM_IOCTL_MODE_ATOMIC, request);
}
