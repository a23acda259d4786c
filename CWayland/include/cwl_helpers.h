/* Small helpers for Swift. Hand-written (not generated). Every name starts with cwl_. */
#ifndef CWL_HELPERS_H
#define CWL_HELPERS_H
#include <wayland-client.h>

/* Swift imports the wl_interface globals as `let`s whose address it cannot reliably take;
 * these return the addresses. */
const struct wl_interface *cwl_compositor_interface(void);
const struct wl_interface *cwl_output_interface(void);
const struct wl_interface *cwl_subcompositor_interface(void);
const struct wl_interface *cwl_shm_interface(void);
/* A 1x1 transparent ARGB8888 wl_buffer in a 4-byte memfd (the pool is destroyed and the fd closed
 * once the buffer exists); NULL if the memfd cannot be made. */
struct wl_buffer *cwl_transparent_pixel(struct wl_shm *shm);
const struct wl_interface *cwl_seat_interface(void);
const struct wl_interface *cwl_xdg_wm_base_interface(void);
const struct wl_interface *cwl_wp_presentation_interface(void);
const struct wl_interface *cwl_wp_viewporter_interface(void);
const struct wl_interface *cwl_wp_fifo_manager_v1_interface(void);
const struct wl_interface *cwl_wp_commit_timing_manager_v1_interface(void);
const struct wl_interface *cwl_wp_fractional_scale_manager_v1_interface(void);
const struct wl_interface *cwl_zwp_input_timestamps_manager_v1_interface(void);
const struct wl_interface *cwl_zwlr_virtual_pointer_manager_v1_interface(void);

/* wl_surface's listener as wl_compositor version 6 defines it: Debian 12's headers stop at
 * version 5 (enter, leave). Listening with it is harmless at any version (libwayland reads an
 * event's entry only when the event comes), and a surface of a compositor bound at version 6,
 * which the libwayland-client loaded at run time must know (cwl_surface_interface_version), needs
 * all four entries. */
struct cwl_surface_listener {
    void (*enter)(void *data, struct wl_surface *surface, struct wl_output *output);
    void (*leave)(void *data, struct wl_surface *surface, struct wl_output *output);
    void (*preferred_buffer_scale)(void *data, struct wl_surface *surface, int32_t factor);
    void (*preferred_buffer_transform)(void *data, struct wl_surface *surface, uint32_t transform);
};
int cwl_surface_add_listener(struct wl_surface *surface, const struct cwl_surface_listener *listener, void *data);

/* The wl_surface version the libwayland-client loaded at run time knows (not the headers'). */
uint32_t cwl_surface_interface_version(void);

/* wl_registry_bind for an interface given by address, at a negotiated version. */
void *cwl_registry_bind(struct wl_registry *registry, uint32_t name,
                        const struct wl_interface *interface, uint32_t version);

/* The protocol error, if the display died of one: fills the interface name and id of the
 * offending object and returns its error code; returns 0 if it was not a protocol error. */
uint32_t cwl_protocol_error(struct wl_display *display, const char **interface_name, uint32_t *object_id);

/* The pid of the process at the other end of a Unix socket (SO_PEERCRED), or -1. */
int cwl_socket_peer_pid(int fd);

#endif
