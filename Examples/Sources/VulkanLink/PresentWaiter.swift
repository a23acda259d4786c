// Vulkan's own word on each present (VK_KHR_present_wait): a thread of its own waits for each
// present id in turn and reports, on the main queue, the CLOCK_MONOTONIC time the wait returned.
// That time is when the program learned the frame was shown: the presentation itself came at or
// before it (Mesa's WSI learns it from the compositor's wp_presentation feedback on Wayland). A
// wait that times out is reported as such, so a present the compositor never shows (a window
// without fifo-v1 whose frames are replaced, vpinball#3394) cannot hang the program.
import CVulkan
import Dispatch
import DisplayLinkCore
import Glibc

final class PresentWaiter: @unchecked Sendable {
    /// What a wait for one present id came to.
    enum Result: Sendable {
        case presented(at: MonotonicInstant)
        case timedOut
        case failed(Int32)
    }

    private let queue = DispatchQueue(label: "VulkanLink.present-wait")
    private let wait: PFN_vkWaitForPresentKHR
    // Handles of the device and the current swapchain: used on the waiting thread only between
    // enqueue and the drain that precedes destroying or replacing them.
    private let device: VkDevice
    private let timeout: UInt64

    init(device: VkDevice, wait: @escaping PFN_vkWaitForPresentKHR, timeout: Nanoseconds = Nanoseconds(250_000_000)) {
        self.device = device
        self.wait = wait
        self.timeout = UInt64(timeout.value)
    }

    /// Waits for present `id` of `swapchain` after the ids enqueued before it, then calls `report`
    /// on the main actor.
    func enqueue(id: UInt64, swapchain: VkSwapchainKHR, report: @escaping @MainActor (UInt64, Result) -> Void) {
        nonisolated(unsafe) let swapchain = swapchain
        queue.async { [self] in
            let status = wait(device, swapchain, id, timeout)
            let result: Result =
                status == VK_SUCCESS || status == VK_SUBOPTIMAL_KHR
                ? .presented(at: MonotonicInstant.now()) : status == VK_TIMEOUT ? .timedOut : .failed(status.rawValue)
            DispatchQueue.main.async { MainActor.assumeIsolated { report(id, result) } }
        }
    }

    /// Returns once every wait enqueued so far has returned (before the swapchain is replaced or
    /// destroyed: no wait may use it then).
    func drain() {
        queue.sync {}
    }
}
