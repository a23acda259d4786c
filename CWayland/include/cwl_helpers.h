/* Small helpers for Swift. Hand-written (not generated). Every name starts with cwl_. */
#ifndef CWL_HELPERS_H
#define CWL_HELPERS_H
#include <wayland-client.h>

/* Swift imports the wl_interface globals as `let`s whose address it cannot reliably take;
 * these return the addresses. */
const struct wl_interface *cwl_compositor_interface(void);
const struct wl_interface *cwl_output_interface(void);
const struct wl_interface *cwl_seat_interface(void);
const struct wl_interface *cwl_xdg_wm_base_interface(void);
const struct wl_interface *cwl_wp_presentation_interface(void);
const struct wl_interface *cwl_wp_viewporter_interface(void);
const struct wl_interface *cwl_wp_fifo_manager_v1_interface(void);
const struct wl_interface *cwl_wp_commit_timing_manager_v1_interface(void);
const struct wl_interface *cwl_wp_fractional_scale_manager_v1_interface(void);
const struct wl_interface *cwl_zwp_input_timestamps_manager_v1_interface(void);
const struct wl_interface *cwl_zwlr_virtual_pointer_manager_v1_interface(void);

/* wl_registry_bind for an interface given by address, at a negotiated version. */
void *cwl_registry_bind(struct wl_registry *registry, uint32_t name,
                        const struct wl_interface *interface, uint32_t version);

/* The protocol error, if the display died of one: fills the interface name and id of the
 * offending object and returns its error code; returns 0 if it was not a protocol error. */
uint32_t cwl_protocol_error(struct wl_display *display, const char **interface_name, uint32_t *object_id);

/* The pid of the process at the other end of a Unix socket (SO_PEERCRED), or -1. */
int cwl_socket_peer_pid(int fd);

#endif
