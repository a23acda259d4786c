// The Vulkan instance, the window's VkSurfaceKHR, a device that can draw and present to it, and
// whether the driver offers VK_KHR_present_id and VK_KHR_present_wait (neither Mesa 26.1's
// lavapipe nor Debian 12's does). With `validate`, the Khronos validation layer checks every call and each message it
// reports as an error is counted (the example's check wants none).
import CVulkan
import Glibc

/// A Vulkan call failed: which call, and its VkResult.
struct VulkanError: Error, CustomStringConvertible {
    var call: String
    var result: VkResult
    var description: String { "\(call) failed: VkResult \(result.rawValue)" }
}

/// Throws when `result` is not VK_SUCCESS.
func check(_ result: VkResult, _ call: String) throws(VulkanError) {
    guard result == VK_SUCCESS else { throw VulkanError(call: call, result: result) }
}

/// The validation layer's error messages, counted on whatever thread the layer reports from.
final class ValidationLog: @unchecked Sendable {
    private var lock = pthread_mutex_t()
    private var errorCount = 0

    init() { pthread_mutex_init(&lock, nil) }

    /// Counts one error (its message is printed where the layer reports it).
    func record() {
        pthread_mutex_lock(&lock)
        errorCount += 1
        pthread_mutex_unlock(&lock)
    }

    var errors: Int {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return errorCount
    }
}

/// C strings that live as long as this value (extension and layer names for create infos).
struct CStrings {
    let pointers: [UnsafePointer<CChar>?]
    init(_ strings: [String]) { pointers = strings.map { UnsafePointer(strdup($0)) } }
    func free() { for p in pointers { Glibc.free(UnsafeMutablePointer(mutating: p)) } }
}

final class VulkanDevice {
    let instance: VkInstance
    let surface: VkSurfaceKHR
    let physicalDevice: VkPhysicalDevice
    let device: VkDevice
    let queue: VkQueue
    let queueFamily: UInt32
    let deviceName: String
    let driverInfo: String
    /// VK_KHR_present_id and VK_KHR_present_wait are enabled: each present carries an id, and
    /// ``waitForPresent`` returns once that present was shown (or the timeout passed).
    let waitForPresent: PFN_vkWaitForPresentKHR?
    let validation: ValidationLog?
    private var messenger: VkDebugUtilsMessengerEXT?
    private let validationBox: Unmanaged<ValidationLog>?

    /// Opens Vulkan on the Wayland window `display`/`surface` (from `DisplaySurface.nativeWindow`).
    init(display: OpaquePointer, waylandSurface: OpaquePointer, validate: Bool) throws {
        var layers: [String] = []
        var instanceExtensions = ["VK_KHR_surface", "VK_KHR_wayland_surface"]
        if validate {
            guard VulkanDevice.hasLayer("VK_LAYER_KHRONOS_validation") else {
                throw ExampleError("--validate: the Khronos validation layer is not installed (Debian: vulkan-validationlayers)")
            }
            layers.append("VK_LAYER_KHRONOS_validation")
            instanceExtensions.append("VK_EXT_debug_utils")
        }
        instance = try VulkanDevice.makeInstance(layers: layers, extensions: instanceExtensions)
        if validate {
            let log = ValidationLog()
            validation = log
            validationBox = Unmanaged.passRetained(log)
            messenger = try VulkanDevice.makeMessenger(instance, validationBox!.toOpaque())
        } else {
            validation = nil
            validationBox = nil
        }

        var surfaceInfo = VkWaylandSurfaceCreateInfoKHR()
        surfaceInfo.sType = VK_STRUCTURE_TYPE_WAYLAND_SURFACE_CREATE_INFO_KHR
        surfaceInfo.display = display
        surfaceInfo.surface = waylandSurface
        var made: VkSurfaceKHR?
        try check(vkCreateWaylandSurfaceKHR(instance, &surfaceInfo, nil, &made), "vkCreateWaylandSurfaceKHR")
        surface = made!

        (physicalDevice, queueFamily) = try VulkanDevice.pickDevice(instance, surface)
        var properties = VkPhysicalDeviceProperties()
        vkGetPhysicalDeviceProperties(physicalDevice, &properties)
        deviceName = withUnsafeBytes(of: properties.deviceName) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        driverInfo = VulkanDevice.driverInfo(physicalDevice)

        let extensions = VulkanDevice.deviceExtensions(physicalDevice)
        let presentWait = extensions.contains("VK_KHR_present_id") && extensions.contains("VK_KHR_present_wait")
        (device, queue) = try VulkanDevice.makeDevice(physicalDevice, queueFamily: queueFamily, presentWait: presentWait)
        if presentWait, let function = vkGetDeviceProcAddr(device, "vkWaitForPresentKHR") {
            waitForPresent = unsafeBitCast(function, to: PFN_vkWaitForPresentKHR.self)
        } else {
            waitForPresent = nil
        }
    }

    /// Device, surface, messenger, instance: each after everything made from it.
    func destroy() {
        vkDeviceWaitIdle(device)
        vkDestroyDevice(device, nil)
        vkDestroySurfaceKHR(instance, surface, nil)
        if let messenger, let destroy = vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT") {
            unsafeBitCast(destroy, to: PFN_vkDestroyDebugUtilsMessengerEXT.self)(instance, messenger, nil)
        }
        vkDestroyInstance(instance, nil)
        validationBox?.release()
    }

    private static func hasLayer(_ name: String) -> Bool {
        var count: UInt32 = 0
        vkEnumerateInstanceLayerProperties(&count, nil)
        var layers = [VkLayerProperties](repeating: VkLayerProperties(), count: Int(count))
        vkEnumerateInstanceLayerProperties(&count, &layers)
        return layers.contains { layer in
            withUnsafeBytes(of: layer.layerName) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) } == name
        }
    }

    private static func makeInstance(layers: [String], extensions: [String]) throws -> VkInstance {
        let layerNames = CStrings(layers)
        let extensionNames = CStrings(extensions)
        defer {
            layerNames.free()
            extensionNames.free()
        }
        return try "VulkanLink".withCString { name in
            var app = VkApplicationInfo()
            app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO
            app.pApplicationName = name
            app.apiVersion = (1 << 22) | (1 << 12)  // VK_API_VERSION_1_1
            return try withUnsafePointer(to: &app) { app in
                try layerNames.pointers.withUnsafeBufferPointer { layers in
                    try extensionNames.pointers.withUnsafeBufferPointer { extensions in
                        var info = VkInstanceCreateInfo()
                        info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO
                        info.pApplicationInfo = app
                        info.enabledLayerCount = UInt32(layers.count)
                        info.ppEnabledLayerNames = layers.baseAddress
                        info.enabledExtensionCount = UInt32(extensions.count)
                        info.ppEnabledExtensionNames = extensions.baseAddress
                        var instance: VkInstance?
                        try check(vkCreateInstance(&info, nil, &instance), "vkCreateInstance")
                        return instance!
                    }
                }
            }
        }
    }

    private static func makeMessenger(_ instance: VkInstance, _ log: UnsafeMutableRawPointer) throws -> VkDebugUtilsMessengerEXT {
        guard let function = vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT") else {
            throw ExampleError("--validate: vkCreateDebugUtilsMessengerEXT is missing")
        }
        let create = unsafeBitCast(function, to: PFN_vkCreateDebugUtilsMessengerEXT.self)
        var info = VkDebugUtilsMessengerCreateInfoEXT()
        info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT
        info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT.rawValue
        info.messageType =
            VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT.rawValue | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT.rawValue
        info.pfnUserCallback = { _, _, data, user in
            let log = Unmanaged<ValidationLog>.fromOpaque(user!).takeUnretainedValue()
            let message = data?.pointee.pMessage.map { String(cString: $0) } ?? "(no message)"
            log.record()
            print("validation error: \(message)")
            return VkBool32(VK_FALSE)
        }
        info.pUserData = log
        var messenger: VkDebugUtilsMessengerEXT?
        try check(create(instance, &info, nil, &messenger), "vkCreateDebugUtilsMessengerEXT")
        return messenger!
    }

    /// The first device with a queue family that draws and presents to `surface`.
    private static func pickDevice(_ instance: VkInstance, _ surface: VkSurfaceKHR) throws -> (VkPhysicalDevice, UInt32) {
        var count: UInt32 = 0
        try check(vkEnumeratePhysicalDevices(instance, &count, nil), "vkEnumeratePhysicalDevices")
        var devices = [VkPhysicalDevice?](repeating: nil, count: Int(count))
        try check(vkEnumeratePhysicalDevices(instance, &count, &devices), "vkEnumeratePhysicalDevices")
        for case let device? in devices {
            var familyCount: UInt32 = 0
            vkGetPhysicalDeviceQueueFamilyProperties(device, &familyCount, nil)
            var families = [VkQueueFamilyProperties](repeating: VkQueueFamilyProperties(), count: Int(familyCount))
            vkGetPhysicalDeviceQueueFamilyProperties(device, &familyCount, &families)
            for (index, family) in families.enumerated() where family.queueFlags & VK_QUEUE_GRAPHICS_BIT.rawValue != 0 {
                var presents: VkBool32 = 0
                vkGetPhysicalDeviceSurfaceSupportKHR(device, UInt32(index), surface, &presents)
                if presents != 0 { return (device, UInt32(index)) }
            }
        }
        throw ExampleError("no Vulkan device draws and presents to a Wayland surface (Debian: mesa-vulkan-drivers has lavapipe)")
    }

    private static func deviceExtensions(_ device: VkPhysicalDevice) -> Set<String> {
        var count: UInt32 = 0
        vkEnumerateDeviceExtensionProperties(device, nil, &count, nil)
        var properties = [VkExtensionProperties](repeating: VkExtensionProperties(), count: Int(count))
        vkEnumerateDeviceExtensionProperties(device, nil, &count, &properties)
        return Set(
            properties.map { p in
                withUnsafeBytes(of: p.extensionName) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            })
    }

    private static func driverInfo(_ device: VkPhysicalDevice) -> String {
        var driver = VkPhysicalDeviceDriverProperties()
        driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES
        return withUnsafeMutablePointer(to: &driver) { driverPointer in
            var properties = VkPhysicalDeviceProperties2()
            properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
            properties.pNext = UnsafeMutableRawPointer(driverPointer)
            vkGetPhysicalDeviceProperties2(device, &properties)
            return withUnsafeBytes(of: driverPointer.pointee.driverInfo) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            }
        }
    }

    private static func makeDevice(_ physical: VkPhysicalDevice, queueFamily: UInt32, presentWait: Bool) throws -> (VkDevice, VkQueue) {
        let extensions = CStrings(["VK_KHR_swapchain"] + (presentWait ? ["VK_KHR_present_id", "VK_KHR_present_wait"] : []))
        defer { extensions.free() }
        var priority: Float = 1
        var presentID = VkPhysicalDevicePresentIdFeaturesKHR()
        presentID.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_ID_FEATURES_KHR
        presentID.presentId = VkBool32(VK_TRUE)
        var wait = VkPhysicalDevicePresentWaitFeaturesKHR()
        wait.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PRESENT_WAIT_FEATURES_KHR
        wait.presentWait = VkBool32(VK_TRUE)
        return try withUnsafeMutablePointer(to: &wait) { wait in
            presentID.pNext = UnsafeMutableRawPointer(wait)
            return try withUnsafeMutablePointer(to: &presentID) { presentID in
                try withUnsafePointer(to: &priority) { priority in
                    try extensions.pointers.withUnsafeBufferPointer { names in
                        var queueInfo = VkDeviceQueueCreateInfo()
                        queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO
                        queueInfo.queueFamilyIndex = queueFamily
                        queueInfo.queueCount = 1
                        queueInfo.pQueuePriorities = priority
                        return try withUnsafePointer(to: &queueInfo) { queueInfo in
                            var info = VkDeviceCreateInfo()
                            info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO
                            info.pNext = presentWait ? UnsafeRawPointer(presentID) : nil
                            info.queueCreateInfoCount = 1
                            info.pQueueCreateInfos = queueInfo
                            info.enabledExtensionCount = UInt32(names.count)
                            info.ppEnabledExtensionNames = names.baseAddress
                            var device: VkDevice?
                            try check(vkCreateDevice(physical, &info, nil, &device), "vkCreateDevice")
                            var queue: VkQueue?
                            vkGetDeviceQueue(device, queueFamily, 0, &queue)
                            return (device!, queue!)
                        }
                    }
                }
            }
        }
    }
}
