/* Hand-written helpers (not generated). */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cwl_helpers.h"
#include "xdg-shell-client-protocol.h"
#include "presentation-time-client-protocol.h"
#include "viewporter-client-protocol.h"
#include "fifo-v1-client-protocol.h"
#include "commit-timing-v1-client-protocol.h"
#include "fractional-scale-v1-client-protocol.h"
#include "input-timestamps-unstable-v1-client-protocol.h"
#include "wlr-virtual-pointer-unstable-v1-client-protocol.h"

const struct wl_interface *cwl_compositor_interface(void) { return &wl_compositor_interface; }

int cwl_surface_add_listener(struct wl_surface *surface, const struct cwl_surface_listener *listener, void *data) {
    return wl_proxy_add_listener((struct wl_proxy *)surface, (void (**)(void))listener, data);
}

uint32_t cwl_surface_interface_version(void) {
    return (uint32_t)wl_surface_interface.version;
}
const struct wl_interface *cwl_subcompositor_interface(void) { return &wl_subcompositor_interface; }
const struct wl_interface *cwl_shm_interface(void) { return &wl_shm_interface; }

struct wl_buffer *cwl_transparent_pixel(struct wl_shm *shm) {
    int fd = memfd_create("displaylink-pixel", MFD_CLOEXEC);
    if (fd < 0) return NULL;
    /* A new memfd reads as zeros: one ARGB8888 pixel of 0 is fully transparent. */
    if (ftruncate(fd, 4) != 0) {
        close(fd);
        return NULL;
    }
    struct wl_shm_pool *pool = wl_shm_create_pool(shm, fd, 4);
    close(fd);
    if (!pool) return NULL;
    struct wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, 1, 1, 4, WL_SHM_FORMAT_ARGB8888);
    wl_shm_pool_destroy(pool);
    return buffer;
}
const struct wl_interface *cwl_output_interface(void) { return &wl_output_interface; }
const struct wl_interface *cwl_seat_interface(void) { return &wl_seat_interface; }
const struct wl_interface *cwl_xdg_wm_base_interface(void) { return &xdg_wm_base_interface; }
const struct wl_interface *cwl_wp_presentation_interface(void) { return &wp_presentation_interface; }
const struct wl_interface *cwl_wp_viewporter_interface(void) { return &wp_viewporter_interface; }
const struct wl_interface *cwl_wp_fifo_manager_v1_interface(void) { return &wp_fifo_manager_v1_interface; }
const struct wl_interface *cwl_wp_commit_timing_manager_v1_interface(void) { return &wp_commit_timing_manager_v1_interface; }
const struct wl_interface *cwl_wp_fractional_scale_manager_v1_interface(void) { return &wp_fractional_scale_manager_v1_interface; }
const struct wl_interface *cwl_zwp_input_timestamps_manager_v1_interface(void) { return &zwp_input_timestamps_manager_v1_interface; }
const struct wl_interface *cwl_zwlr_virtual_pointer_manager_v1_interface(void) { return &zwlr_virtual_pointer_manager_v1_interface; }

void *cwl_registry_bind(struct wl_registry *registry, uint32_t name,
                        const struct wl_interface *interface, uint32_t version)
{
    return wl_registry_bind(registry, name, interface, version);
}

uint32_t cwl_protocol_error(struct wl_display *display, const char **interface_name, uint32_t *object_id)
{
    const struct wl_interface *interface = NULL;
    uint32_t code = wl_display_get_protocol_error(display, &interface, object_id);
    *interface_name = interface ? interface->name : NULL;
    return code;
}

int cwl_socket_peer_pid(int fd)
{
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0)
        return -1;
    return credentials.pid;
}
